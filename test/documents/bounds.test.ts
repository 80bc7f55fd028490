import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { guardedFetch } from "../../src/lib/url-guard";
import { parseDocument, UnparseableDocumentError } from "../../src/services/parsing";
import { loadDocumentTables, TABLE_LIMITS } from "../../src/services/tables/load";
import { tablesStore } from "../../src/services/tables/service";
import { discoverSite, sitemapXml } from "../../src/services/web/site";
import { call, createKb, createOrg, expectStatus, testServer, type Auth } from "../helpers";
import { uploadFile, waitForDocument } from "./doc-helpers";
import { columnLetters, inlineRows, officeBomb, pdfBomb, workbook } from "./bombs";
import { multiPagePdf } from "./fixtures";

/**
 * Bounded work (issue 24, API-DECISIONS "Bounded work"): small hostile files
 * fail fast with a reason naming the bound; decompression is counted as it
 * happens, never trusted from what a file declares.
 */

const MIME = {
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

async function setup() {
  const org = await createOrg();
  const kb = await createKb(org);
  const auth: Auth = { cookie: org.owner.cookie };
  /** Uploads a file and waits for its processing to end; the time from upload to the end. */
  const process = async (filename: string, body: Uint8Array, mime = MIME.xlsx) => {
    const started = Date.now();
    const { id } = await uploadFile(auth, kb, { filename, mime, body });
    const doc = await waitForDocument(auth, id);
    return { doc, ms: Date.now() - started };
  };
  const tables = async () => expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200).tables as any[];
  return { org, kb, auth, process, tables };
}

const cell = (ref: string, text: string) => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;

describe("spreadsheets within Excel's grid and the document's limits", () => {
  it("a 1 KB XLSX whose cell sits in column 10,000,000 fails at once, saying why", async () => {
    const { process } = await setup();
    const file = workbook([{ name: "Far", rows: `<row r="1">${cell(`${columnLetters(10_000_000)}1`, "far away")}</row>` }]);
    expect(file.byteLength).toBeLessThan(1500);
    const { doc, ms } = await process("far.xlsx", file);
    expect(doc.status).toBe("failed");
    expect(doc.error).toMatch(/cell UVXWJ1 in sheet "Far", beyond Excel's last column XFD \(16,384\)/);
    expect(ms).toBeLessThan(10_000);
    const row = workbook([{ name: "Deep", rows: `<row r="2000000">${cell("A2000000", "deep down")}</row>` }]);
    const deep = await process("deep.xlsx", row);
    expect([deep.doc.status, deep.doc.error]).toEqual(["failed", expect.stringMatching(/beyond Excel's last row 1,048,576/)]);
  });

  it("a cell in the last column (XFD) is read without spreading over the columns before it", async () => {
    const { process, tables } = await setup();
    const rows = `<row r="1">${cell("XFD1", "Edge")}</row>` + Array.from({ length: 300 }, (_, i) => `<row r="${i + 2}">${cell(`XFD${i + 2}`, `v${i}`)}</row>`).join("");
    const { doc } = await process("edge.xlsx", workbook([{ name: "Edge", rows }]));
    expect(doc.status, doc.error).toBe("processed");
    expect((await tables()).map((t) => [t.name, t.columns.map((c: any) => c.name), t.row_count])).toEqual([["edge_edge", ["edge"], 300]]);
  });

  it("a workbook listing one sheet 50 times reads that part once", async () => {
    const { process, tables } = await setup();
    const file = workbook([{ name: "Cities", rows: inlineRows(2000) }], { sheetEntries: 50 });
    const { doc } = await process("cities.xlsx", file);
    expect(doc.status, doc.error).toBe("processed");
    expect((await tables()).map((t) => [t.name, t.sheet, t.row_count])).toEqual([["cities_cities", "Cities", 2000]]);
  });

  it("at most 50 tables per document", async () => {
    const { process, tables } = await setup();
    const sheets = Array.from({ length: 60 }, (_, i) => ({ name: `S${i + 1}`, rows: `<row r="1">${cell("A1", "n")}</row><row r="2"><c r="A2"><v>${i}</v></c></row>` }));
    const { doc } = await process("many.xlsx", workbook(sheets));
    expect(doc.status, doc.error).toBe("processed");
    const listed = await tables();
    expect(listed).toHaveLength(50);
    expect(listed.map((t) => t.sheet)).not.toContain("S51");
  });

  it("the row limit is per document: later tables get what the earlier ones left", async () => {
    const { org, kb } = await setup();
    const records = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ tag, i }));
    const bytes = new TextEncoder().encode(JSON.stringify({ first: records(4, "a"), second: records(4, "b"), third: records(2, "c") }));
    const doc = { id: `doc_rows_${org.id}`, knowledgeBaseId: kb.id, filename: "parts.json", ingestSeq: 1 };
    expect(await loadDocumentTables(env as any, doc, "json", bytes, { ...TABLE_LIMITS, maxRows: 5 })).toBe(3);
    const listed = await tablesStore(env as any, kb.id).listTables();
    expect(listed.map((t) => [t.part, t.row_count, t.source_row_count, t.truncated])).toEqual([
      ["first", 4, 4, false],
      ["second", 1, 4, true],
      ["third", 0, 2, true],
    ]);
  });
});

describe("decompression counted as it happens", () => {
  const MB = 1024 * 1024;

  it("Office zip bombs that declare 1 KB fail at the 64 MB cap, before mammoth or the XML parser", async () => {
    for (const kind of ["docx", "xlsx", "pptx"] as const) {
      const bomb = officeBomb(kind, 70 * MB);
      expect(bomb.byteLength).toBeLessThan(600 * 1024);
      const started = Date.now();
      const err = await parseDocument(kind, bomb).catch((e) => e);
      expect(err, kind).toBeInstanceOf(UnparseableDocumentError);
      expect(err.message).toBe(`The ${kind.toUpperCase()} file inflates past 64 MB (the cap on inflated XML per document)`);
      expect(Date.now() - started, kind).toBeLessThan(8_000);
    }
    // Under the cap the same construction is read (it is the cap that stops it, not the shape).
    await expect(parseDocument("xlsx", officeBomb("xlsx", 2 * MB))).rejects.toThrow(/no cells with content/);
  });

  it("a PDF whose content stream is a deflate bomb fails at the cap before PDF.js inflates it", async () => {
    const bomb = pdfBomb(100 * MB);
    expect(bomb.byteLength).toBeLessThan(700 * 1024);
    const started = Date.now();
    await expect(parseDocument("pdf", bomb)).rejects.toThrow("The PDF file inflates past 64 MB (the cap on inflated streams per document)");
    expect(Date.now() - started).toBeLessThan(8_000);
    // Ordinary PDFs (their streams are compressed too) are read as before.
    expect((await parseDocument("pdf", await multiPagePdf())).pageCount).toBe(3);
  });

  it("an uploaded DOCX zip bomb ends failed with the cap as its reason", async () => {
    const { process } = await setup();
    const { doc, ms } = await process("bomb.docx", officeBomb("docx", 100 * MB), MIME.docx);
    expect([doc.status, doc.error]).toEqual(["failed", "The DOCX file inflates past 64 MB (the cap on inflated XML per document)"]);
    expect(ms).toBeLessThan(15_000);
  });

  it("a gzip bomb sitemap stops at its cap and discovery still answers", async () => {
    const web = testServer("web-bombs");
    const res = await guardedFetch(env as any, `${web}/sitemap-bomb.xml.gz`);
    expect(res.body.byteLength).toBeLessThan(200 * 1024);
    const started = Date.now();
    await expect(sitemapXml(res.body, res.url, res.contentType)).rejects.toThrow(
      `The sitemap ${web}/sitemap-bomb.xml.gz inflates past 16 MB (the decompression cap for sitemaps)`,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    // robots.txt lists the bomb next to the real sitemaps: the pages are still found.
    const byName = web.replace("127.0.0.1", "localhost");
    expect(await discoverSite(env as any, byName, false)).toContain(`${byName}/article`);
  });

  it("a page whose Content-Encoding is a gzip bomb stops at the page size limit", async () => {
    const started = Date.now();
    await expect(guardedFetch(env as any, `${testServer("web")}/bomb-encoded`)).rejects.toMatchObject({ code: "payload_too_large" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

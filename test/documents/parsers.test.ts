import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseDocument, UnparseableDocumentError } from "../../src/services/parsing";
import { CHUNK_MAX_TOKENS, chunkSections, estimateTokens } from "../../src/services/parsing/chunker";
import { htmlToMarkdown } from "../../src/services/parsing/html";
import { markdownSections } from "../../src/services/parsing/markdown";
import { parseCsv } from "../../src/services/parsing/tabular";
import { detectKind, storageSafeName } from "../../src/services/documents/types";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { call, createKb, createOrg, expectError, expectStatus, fetchWorker } from "../helpers";
import { db, uploadFile, waitForDocument } from "./doc-helpers";
import { ARTICLE_HTML, docxWithHeadings, imageOnlyPdf, multiPagePdf, simplePptx, simpleXlsx } from "./fixtures";

const enc = (s: string) => new TextEncoder().encode(s);

describe("parsers", () => {
  it("PDF: text per page with page numbers, headings from larger type", async () => {
    const parsed = await parseDocument("pdf", await multiPagePdf());
    expect(parsed.pageCount).toBe(3);
    expect(parsed.sections.map((s) => [s.page, s.headings.join(" > ")])).toEqual([
      [1, "Introduction"],
      [2, "Methods"],
      [3, "Methods"],
    ]);
    expect(parsed.sections[0].text).toMatch(/aurora borealis is caused by charged particles\. They collide/);
    expect(parsed.sections[2].text).toMatch(/full-frame mirrorless/);
    expect(parsed.markdown).toMatch(/# Introduction[\s\S]*\[Page 2\][\s\S]*# Methods/);
  });

  it("PDF without a text layer fails with an error that says so; garbage is not a PDF", async () => {
    await expect(parseDocument("pdf", await imageOnlyPdf())).rejects.toThrow(/no extractable text.*OCR/);
    await expect(parseDocument("pdf", enc("%PDF-1.7 truncated"))).rejects.toBeInstanceOf(UnparseableDocumentError);
  });

  it("DOCX: Word headings become the heading path", async () => {
    const parsed = await parseDocument("docx", await docxWithHeadings());
    expect(parsed.sections.map((s) => s.headings.join(" > "))).toEqual([
      "Employee Handbook",
      "Employee Handbook > Vacation",
      "Employee Handbook > Expenses",
    ]);
    expect(parsed.sections[1].text).toMatch(/twenty-five days of paid vacation/);
    await expect(parseDocument("docx", enc("PK not really a zip"))).rejects.toThrow(/not a readable DOCX/);
  });

  it("HTML: readable content only (navigation, header, sidebar and footer stripped), title kept", async () => {
    const parsed = await parseDocument("html", enc(ARTICLE_HTML));
    expect(parsed.title).toBe("How Bees Make Honey | Nature Blog");
    const all = parsed.sections.map((s) => s.text).join("\n");
    expect(all).toMatch(/store it in a special stomach called the crop/);
    expect(all).toMatch(/eighteen percent/);
    for (const chrome of ["Pricing plans", "Sign in", "newsletter", "Copyright", "Privacy policy"]) expect(all).not.toContain(chrome);
    expect(parsed.sections.some((s) => s.headings.at(-1) === "Evaporation")).toBe(true);
    // Without an article, the body minus chrome is used.
    const plain = htmlToMarkdown("<html><body><nav>Menu</nav><p>Just one line.</p><footer>Foot</footer></body></html>");
    expect(plain.markdown).toBe("Just one line.");
  });

  it("Markdown: ATX and setext headings, code fences are not headings", async () => {
    const { sections, title } = await markdownSections(
      ["Guide", "=====", "", "Intro text.", "", "## Install", "", "```sh", "# not a heading", "```", "", "Setup", "-----", "", "Configure it."].join("\n"),
    );
    expect(title).toBe("Guide");
    expect(sections.map((s) => [s.headings.join(" > "), s.text])).toEqual([
      ["Guide", "Intro text."],
      ["Guide > Install", "```sh\n# not a heading\n```"],
      ["Guide > Setup", "Configure it."],
    ]);
  });

  it("CSV: quoted fields, rows with their header as context", async () => {
    expect(await parseCsv('a,b\n"x, y","line\nbreak"\n"say ""hi""",2\n')).toEqual([["a", "b"], ["x, y", "line\nbreak"], ['say "hi"', "2"]]);
    expect(await parseCsv("a;b\n1;2")).toEqual([["a", "b"], ["1", "2"]]);
    const parsed = await parseDocument("csv", enc("Name,Role,Team\nAda,Engineer,Compilers\nGrace,Admiral,\n"));
    expect(parsed.sections).toEqual([{ headings: ["Rows 1–2"], text: "Name: Ada; Role: Engineer; Team: Compilers\nName: Grace; Role: Admiral" }]);
  });

  it("JSON: flattened key paths; arrays of records one line each", async () => {
    const obj = await parseDocument("json", enc(JSON.stringify({ name: "kb", settings: { retries: 3, hosts: ["a", "b"] } })));
    expect(obj.sections).toEqual([
      { headings: [], text: "name: kb" },
      { headings: ["settings"], text: "settings.retries: 3\nsettings.hosts[0]: a\nsettings.hosts[1]: b" },
    ]);
    const arr = await parseDocument("json", enc(JSON.stringify([{ id: 1, tags: ["x"] }, { id: 2, owner: { name: "Ada" } }])));
    expect(arr.sections).toEqual([{ headings: ["Items 1–2"], text: "[0] id: 1; tags[0]: x\n[1] id: 2; owner.name: Ada" }]);
    await expect(parseDocument("json", enc("{nope"))).rejects.toThrow(/not valid JSON/);
  });

  it("XLSX: each sheet's rows with header context", async () => {
    const parsed = await parseDocument("xlsx", simpleXlsx());
    expect(parsed.pageCount).toBe(2);
    expect(parsed.sections).toEqual([
      { headings: ["Staff", "Rows 1–1"], text: "Name: Ada Lovelace; Role: Chief Analyst" },
      { headings: ["Budget & Costs", "Rows 1–1"], text: "Item: Telescope; Cost: 1299.5" },
    ]);
  });

  it("PPTX: one section per slide with its title and number", async () => {
    const parsed = await parseDocument("pptx", simplePptx());
    expect(parsed.pageCount).toBe(2);
    expect(parsed.sections).toEqual([
      { headings: ["Slide 1: Quarterly Results"], page: 1, text: "Revenue grew & margins improved in Q3." },
      { headings: ["Slide 2: Roadmap"], page: 2, text: "Launch the mobile app in spring." },
    ]);
  });

  it("text: binary content and empty files are refused", async () => {
    await expect(parseDocument("text", new Uint8Array([0, 1, 2, 3, 4, 5, 0, 0, 7, 8]))).rejects.toThrow(/does not look like text/);
    await expect(parseDocument("text", new Uint8Array(0))).rejects.toThrow(/empty/);
    await expect(parseDocument("markdown", enc("   \n\n  "))).rejects.toThrow(/no text/);
    const bom = await parseDocument("text", new Uint8Array([0xef, 0xbb, 0xbf, ...enc("héllo\r\nworld")]));
    expect(bom.sections[0].text).toBe("héllo\nworld");
  });

  it("type detection and storage-safe names", () => {
    expect(detectKind("text/plain", "notes.md")).toBe("markdown");
    expect(detectKind("application/octet-stream", "a.DOCX")).toBe("docx");
    expect(detectKind("text/html; charset=UTF-8", "x")).toBe("html");
    expect(detectKind("image/png", "a.pdf")).toBeNull();
    expect(storageSafeName("../../etc/pass wd.txt")).toBe("pass_wd.txt");
    expect(storageSafeName("résumé 2026.pdf")).toBe("resume_2026.pdf");
    expect(storageSafeName("???")).toBe("file");
  });
});

describe("chunker", () => {
  it("cuts long sections within the token budget with overlap, keeping heading and page", async () => {
    const sentence = (i: number) => `Sentence number ${i} explains one more detail about glaciers and their slow movement.`;
    const para = (from: number) => Array.from({ length: 8 }, (_, i) => sentence(from + i)).join(" ");
    const text = Array.from({ length: 10 }, (_, i) => para(i * 8)).join("\n\n");
    const chunks = await chunkSections([{ headings: ["Ice", "Glaciers"], page: 4, text }]);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.tokens).toBeLessThanOrEqual(CHUNK_MAX_TOKENS);
      expect(c.heading).toBe("Ice > Glaciers");
      expect(c.page).toBe(4);
    }
    expect(chunks.map((c) => c.ordinal)).toEqual(chunks.map((_, i) => i));
    // Overlap: each chunk after the first starts with the end of the previous one.
    const lastSentence = chunks[0].body.split(/(?<=\.)\s+/).at(-1)!;
    expect(chunks[1].body.startsWith(lastSentence)).toBe(true);
    // Nothing is lost.
    for (let i = 0; i < 80; i++) expect(chunks.some((c) => c.body.includes(sentence(i)))).toBe(true);
  });

  it("splits a single enormous paragraph and a single enormous word", async () => {
    const chunks = await chunkSections([{ headings: [], text: "word ".repeat(5000) + "x".repeat(10_000) }]);
    for (const c of chunks) expect(estimateTokens(c.body)).toBeLessThanOrEqual(CHUNK_MAX_TOKENS);
    expect(chunks.map((c) => c.body).join("").replace(/\s/g, "").length).toBeGreaterThanOrEqual(4 * 5000 + 10_000);
  });

  it("merges a very short section into the next when it lies under its heading; never across pages or sibling sections", async () => {
    const chunks = await chunkSections([
      { headings: ["Guide"], text: "Short intro." },
      { headings: ["Guide", "Install"], text: "Run the installer." },
      { headings: ["Other"], text: "Separate topic." },
      { headings: ["Other"], page: 2, text: "Next page." },
    ]);
    expect(chunks.map((c) => [c.heading, c.body, c.page])).toEqual([
      ["Guide > Install", "Short intro.\n\nInstall\nRun the installer.", null],
      ["Other", "Separate topic.", null],
      ["Other", "Next page.", 2],
    ]);
  });
});

describe("real files end to end", () => {
  it("a multi-page PDF is processed with page numbers, headings and a derived text document", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const { id } = await uploadFile(auth, kb, { filename: "aurora.pdf", mime: "application/pdf", body: await multiPagePdf() });
    const doc = await waitForDocument(auth, id);
    expect(doc).toMatchObject({ status: "processed", page_count: 3 });
    const hits = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "exposure times photographed" });
    expect(hits[0]).toMatchObject({ document_id: id, filename: "aurora.pdf", page: 2, heading: "Methods" });

    // The derived text companion: not listed, readable, not reprocessable or deletable on its own.
    const derived = await env.DB.prepare("SELECT id FROM documents WHERE parent_document_id = ?").bind(id).first<{ id: string }>();
    expect(derived).toBeTruthy();
    const list = expectStatus(await call(`/documents?kb_id=${kb.id}`, auth), 200);
    expect(list.documents.map((d: any) => d.id)).toEqual([id]);
    const d = expectStatus(await call(`/documents/${derived!.id}`, auth), 200);
    expect(d).toMatchObject({ parent_document_id: id, filename: "aurora.pdf.md", mime_type: "text/markdown", status: "processed" });
    expectError(await call(`/documents/${derived!.id}/reprocess`, { ...auth, method: "POST" }), 409, "derived_document");
    expectError(await call(`/documents/${derived!.id}`, { ...auth, method: "DELETE" }), 409, "derived_document");
    const url = expectStatus(await call(`/documents/${derived!.id}/download`, auth), 200).download_url;
    expect(await (await fetchWorker(url)).text()).toMatch(/\[Page 2\][\s\S]*Exposure times ranged/);
    // Derived documents count toward neither the document count nor storage.
    const tenant = expectStatus(await call(`/tenants/${org.tenantId}`, auth), 200);
    expect(tenant.document_count).toBe(1);
    expect(tenant.storage_used_bytes).toBe(doc.size_bytes);
    // Deleting the source deletes its companion.
    expect((await call(`/documents/${id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expect(expectStatus(await call(`/documents/${derived!.id}`, auth), 200).status).toBe("deleted");
  });

  it("a scanned-looking PDF ends failed with a readable error", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const { id } = await uploadFile(auth, kb, { filename: "scan.pdf", mime: "application/pdf", body: await imageOnlyPdf() });
    const doc = await waitForDocument(auth, id);
    expect(doc.status).toBe("failed");
    expect(doc.error).toMatch(/no extractable text/);
  });

  it("a DOCX and an HTML page become searchable with their headings", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = await uploadFile(auth, kb, {
      filename: "handbook.docx",
      mime: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      body: await docxWithHeadings(),
    });
    const b = await uploadFile(auth, kb, { filename: "bees.html", mime: "text/html", body: ARTICLE_HTML });
    expect((await waitForDocument(auth, a.id)).status).toBe("processed");
    expect((await waitForDocument(auth, b.id)).status).toBe("processed");
    const vacation = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "how many vacation days" });
    expect(vacation[0]).toMatchObject({ document_id: a.id, heading: "Employee Handbook > Vacation" });
    const honey = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "water content evaporates honeycomb" });
    expect(honey[0].document_id).toBe(b.id);
    expect(await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "newsletter pricing", vector: false })).toEqual([]);
  });
});

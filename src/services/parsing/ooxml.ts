import { unzipSync, type Unzipped } from "fflate";
import { tableSections } from "./tabular";
import { UnparseableDocumentError, type ParsedDocument, type ParsedSection } from "./types";

/** Refuse archives that would inflate past this (zip bombs). */
const MAX_INFLATED_BYTES = 256 * 1024 * 1024;

function unzip(bytes: Uint8Array, what: string, wanted: (name: string) => boolean): Unzipped {
  let total = 0;
  try {
    return unzipSync(bytes, {
      filter: (f) => {
        if (!wanted(f.name)) return false;
        total += f.originalSize;
        if (total > MAX_INFLATED_BYTES) throw new UnparseableDocumentError(`The ${what} file is too large once decompressed`);
        return true;
      },
    });
  } catch (e) {
    if (e instanceof UnparseableDocumentError) throw e;
    throw new UnparseableDocumentError(`The file is not a readable ${what} document (${(e as Error).message.slice(0, 200)})`);
  }
}

const utf8 = (u: Uint8Array | undefined) => (u ? new TextDecoder().decode(u) : "");

export function decodeXmlEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|lt|gt|amp|quot|apos);/gi, (_, e: string) => {
    const lower = e.toLowerCase();
    if (lower[0] === "#") {
      const code = lower[1] === "x" ? parseInt(lower.slice(2), 16) : parseInt(lower.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    return { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" }[lower] ?? "";
  });
}

const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];

/** Text of all <t> / <a:t> runs in an XML fragment. */
function runsText(xml: string, tag: "t" | "a:t"): string {
  const re = tag === "t" ? /<t(?:\s[^>]*)?>([\s\S]*?)<\/t>/g : /<a:t(?:\s[^>]*)?>([\s\S]*?)<\/a:t>/g;
  let out = "";
  for (const m of xml.matchAll(re)) out += decodeXmlEntities(m[1]);
  return out;
}

/** Relationship id -> target path (resolved against `baseDir`). */
function relationships(xml: string, baseDir: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const m of xml.matchAll(/<Relationship\b[^>]*>/g)) {
    const id = attr(m[0], "Id");
    const target = attr(m[0], "Target");
    if (id && target) map.set(id, target.startsWith("/") ? target.slice(1) : baseDir + target);
  }
  return map;
}

function columnIndex(ref: string | undefined, fallback: number): number {
  const letters = /^[A-Z]+/i.exec(ref ?? "")?.[0]?.toUpperCase();
  if (!letters) return fallback;
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

/** Built-in number formats that show dates or times (ECMA-376 18.8.30). */
const BUILTIN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58]);

/** Style index -> true when the cell's number format shows a date or time. */
function dateStyles(stylesXml: string): boolean[] {
  const custom = new Map<number, string>();
  for (const m of stylesXml.matchAll(/<numFmt\b[^>]*>/g)) {
    const id = Number(attr(m[0], "numFmtId"));
    const code = decodeXmlEntities(attr(m[0], "formatCode") ?? "");
    custom.set(id, code);
  }
  const isDateCode = (code: string) => /[dmyhs]/i.test(code.replace(/"[^"]*"|\[[^\]]*\]|\\./g, "")) && !/^(General|@|0.*|#.*)$/i.test(code);
  const xfs = /<cellXfs\b[^>]*>([\s\S]*?)<\/cellXfs>/.exec(stylesXml)?.[1] ?? "";
  return [...xfs.matchAll(/<xf\b[^>]*>/g)].map((m) => {
    const id = Number(attr(m[0], "numFmtId") ?? 0);
    return BUILTIN_DATE_FORMATS.has(id) || (custom.has(id) && isDateCode(custom.get(id)!));
  });
}

/** An Excel serial date (1900 system) as ISO 8601: a date, a date-time, or a time of day. */
export function excelSerialToIso(serial: number): string {
  const ms = Math.round(serial * 86_400_000);
  const iso = new Date(Date.UTC(1899, 11, 30) + ms).toISOString();
  if (serial < 1) return iso.slice(11, 19);
  return Number.isInteger(serial) ? iso.slice(0, 10) : iso.slice(0, 19);
}

export interface XlsxSheet {
  name: string;
  /** Non-empty rows, cells as text (date-formatted numbers as ISO 8601). */
  rows: string[][];
}

/** Every sheet of a workbook with its rows; the workbook's sheet count. */
export function xlsxSheets(bytes: Uint8Array): { sheets: XlsxSheet[]; sheetCount: number } {
  const files = unzip(bytes, "XLSX", (n) => n === "xl/workbook.xml" || n === "xl/_rels/workbook.xml.rels" || n === "xl/sharedStrings.xml" || n === "xl/styles.xml" || n.startsWith("xl/worksheets/"));
  const workbook = utf8(files["xl/workbook.xml"]);
  if (!workbook) throw new UnparseableDocumentError("The file is not a readable XLSX document (no workbook)");
  const rels = relationships(utf8(files["xl/_rels/workbook.xml.rels"]), "xl/");
  const shared = [...utf8(files["xl/sharedStrings.xml"]).matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) => runsText(m[1], "t"));
  const dates = dateStyles(utf8(files["xl/styles.xml"]));

  const out: XlsxSheet[] = [];
  const sheets = [...workbook.matchAll(/<sheet\b[^>]*>/g)].map((m) => ({ name: decodeXmlEntities(attr(m[0], "name") ?? "Sheet"), rid: attr(m[0], "r:id") }));
  for (const sheet of sheets) {
    const xml = utf8(files[(sheet.rid && rels.get(sheet.rid)) || ""]);
    if (!xml) continue;
    const rows: string[][] = [];
    for (const rm of xml.matchAll(/<row\b[^>]*>([\s\S]*?)<\/row>/g)) {
      const row: string[] = [];
      let col = 0;
      for (const cm of rm[1].matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
        col = columnIndex(attr(cm[1], "r"), col);
        const type = attr(cm[1], "t");
        const inner = cm[2] ?? "";
        const v = /<v>([\s\S]*?)<\/v>/.exec(inner)?.[1];
        let value = "";
        if (type === "s") value = shared[Number(v)] ?? "";
        else if (type === "inlineStr") value = runsText(inner, "t");
        else if (type === "b") value = v === "1" ? "TRUE" : "FALSE";
        else value = v !== undefined ? decodeXmlEntities(v) : "";
        // A number shown as a date is stored as a serial day count: give it as ISO 8601.
        const style = Number(attr(cm[1], "s") ?? -1);
        if ((type === undefined || type === "n") && value !== "" && dates[style] && Number.isFinite(Number(value))) value = excelSerialToIso(Number(value));
        row[col] = value;
        col++;
      }
      if (row.some((v) => v?.trim())) rows.push(Array.from(row, (v) => v ?? ""));
    }
    out.push({ name: sheet.name, rows });
  }
  return { sheets: out, sheetCount: sheets.length };
}

/** XLSX: each sheet's rows with their header row as context (like CSV), one heading per sheet. */
export function parseXlsx(bytes: Uint8Array): ParsedDocument {
  const { sheets, sheetCount } = xlsxSheets(bytes);
  const sections: ParsedSection[] = [];
  const md: string[] = [];
  for (const { name, rows } of sheets) {
    sections.push(...tableSections(rows, [name]));
    md.push(`## ${name}\n\n${rows.map((r) => r.join(" | ")).join("\n")}`);
  }
  if (!sections.length) throw new UnparseableDocumentError("The spreadsheet has no cells with content");
  return { sections, pageCount: sheetCount, markdown: md.join("\n\n") };
}

/** PPTX: one section per slide (page = slide number), headed by the slide's title. */
export function parsePptx(bytes: Uint8Array): ParsedDocument {
  const files = unzip(bytes, "PPTX", (n) => n === "ppt/presentation.xml" || n === "ppt/_rels/presentation.xml.rels" || /^ppt\/slides\/slide\d+\.xml$/.test(n));
  const presentation = utf8(files["ppt/presentation.xml"]);
  if (!presentation) throw new UnparseableDocumentError("The file is not a readable PPTX document (no presentation)");
  const rels = relationships(utf8(files["ppt/_rels/presentation.xml.rels"]), "ppt/");
  let order = [...presentation.matchAll(/<p:sldId\b[^>]*>/g)].map((m) => rels.get(attr(m[0], "r:id") ?? "")).filter((p): p is string => !!p && !!files[p]);
  if (!order.length) {
    order = Object.keys(files)
      .filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n))
      .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)![1]) - Number(/(\d+)\.xml$/.exec(b)![1]));
  }
  const sections: ParsedSection[] = [];
  const md: string[] = [];
  order.forEach((path, i) => {
    const xml = utf8(files[path]);
    const slide = i + 1;
    let title: string | undefined;
    const paragraphs: string[] = [];
    for (const sp of xml.matchAll(/<p:sp\b[\s\S]*?<\/p:sp>/g)) {
      const isTitle = /<p:ph\b[^>]*type="(title|ctrTitle)"/.test(sp[0]);
      const texts = [...sp[0].matchAll(/<a:p\b[\s\S]*?<\/a:p>/g)].map((p) => runsText(p[0], "a:t").trim()).filter(Boolean);
      if (isTitle && !title && texts.length) title = texts.join(" ");
      else paragraphs.push(...texts);
    }
    const heading = title ? `Slide ${slide}: ${title}` : `Slide ${slide}`;
    const text = paragraphs.join("\n");
    if (text || title) sections.push({ headings: [heading], page: slide, text: text || title! });
    md.push(`## ${heading}\n\n${text}`);
  });
  if (!sections.length) throw new UnparseableDocumentError("The presentation has no slides with text");
  return { sections, pageCount: order.length, markdown: md.join("\n\n") };
}

import { Slicer } from "../../lib/slices";
import { attr, decodeXmlEntities, relationships, runsText } from "./ooxml";
import { tableSections } from "./tabular";
import { UnparseableDocumentError, type ParsedDocument, type ParsedSection } from "./types";
import { OfficeZip } from "./zip";

/**
 * XLSX workbooks, bounded (API-DECISIONS "Bounded work"): the XML is inflated
 * within the document's cap (zip.ts); a cell reference past the last column
 * (XFD, 16,384) or row (1,048,576) Excel has refuses the file; sheets that
 * point at the same part read it once; at most XLSX_LIMITS.maxSheets sheets
 * and maxRows rows are read per document. Rows are sparse arrays (a cell at
 * column XFD does not make 16,383 empty ones), read in slices that yield.
 */

export const XLSX_LIMITS = {
  /** Excel's own grid: column XFD and row 1,048,576. */
  maxColumn: 16_384,
  maxRow: 1_048_576,
  /** Tables (sheets) per document. */
  maxSheets: 50,
  /** Rows per document, all sheets together; past it the rest is left out (`cut`). */
  maxRows: 1_000_000,
};

export interface XlsxSheet {
  name: string;
  /** Non-empty rows, cells as text (date-formatted numbers as ISO 8601); sparse: a missing cell is a hole. */
  rows: string[][];
  /** Rows were left out here (the document's row limit). */
  cut: boolean;
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

/** "B7" -> column 1 (0-based); refuses references outside Excel's grid. Without a reference, `fallback`. */
export function cellColumn(ref: string | undefined, fallback: number, sheet: string): number {
  let col = fallback;
  if (ref) {
    const m = /^([A-Za-z]+)(\d*)$/.exec(ref);
    if (m) {
      col = 0;
      for (const ch of m[1].toUpperCase()) {
        col = col * 26 + (ch.charCodeAt(0) - 64);
        if (col > XLSX_LIMITS.maxColumn) break;
      }
      col -= 1;
      if (m[2] && Number(m[2]) > XLSX_LIMITS.maxRow) throw beyondGrid(ref, sheet, "row 1,048,576");
    }
  }
  if (col >= XLSX_LIMITS.maxColumn) throw beyondGrid(ref ?? `column ${col + 1}`, sheet, "column XFD (16,384)");
  return col;
}

const beyondGrid = (ref: string, sheet: string, limit: string) =>
  new UnparseableDocumentError(`The spreadsheet refers to cell ${ref.slice(0, 20)} in sheet "${sheet.slice(0, 100)}", beyond Excel's last ${limit}`);

interface SheetContext {
  name: string;
  shared: string[];
  dates: boolean[];
  slicer: Slicer;
}

/** One cell's text (shared and inline strings, booleans, dates from their number format). */
function cellValue(attrs: string, inner: string, ctx: SheetContext): string {
  const type = attr(attrs, "t");
  const v = /<v>([\s\S]*?)<\/v>/.exec(inner)?.[1];
  let value = "";
  if (type === "s") value = ctx.shared[Number(v)] ?? "";
  else if (type === "inlineStr") value = runsText(inner, "t");
  else if (type === "b") value = v === "1" ? "TRUE" : "FALSE";
  else value = v !== undefined ? decodeXmlEntities(v) : "";
  // A number shown as a date is stored as a serial day count: give it as ISO 8601.
  const style = Number(attr(attrs, "s") ?? -1);
  if ((type === undefined || type === "n") && value !== "" && ctx.dates[style] && Number.isFinite(Number(value))) value = excelSerialToIso(Number(value));
  return value;
}

/** A sheet's non-empty rows, at most `rowBudget`; `cut` when more were left. */
async function sheetRows(xml: string, ctx: SheetContext, rowBudget: number): Promise<{ rows: string[][]; cut: boolean }> {
  const rows: string[][] = [];
  for (const rm of xml.matchAll(/<row\b([^>]*)>([\s\S]*?)<\/row>/g)) {
    const r = attr(rm[1], "r");
    if (r && Number(r) > XLSX_LIMITS.maxRow) throw beyondGrid(`row ${r}`, ctx.name, "row 1,048,576");
    const row: string[] = [];
    let col = 0;
    let cells = 0;
    let filled = false;
    for (const cm of rm[2].matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
      col = cellColumn(attr(cm[1], "r"), col, ctx.name);
      const value = cellValue(cm[1], cm[2] ?? "", ctx);
      if (value !== "") row[col] = value;
      if (value.trim()) filled = true;
      col++;
      cells++;
    }
    if (filled) {
      if (rows.length >= rowBudget) return { rows, cut: true };
      rows.push(row);
    }
    await ctx.slicer.tick(1 + cells);
  }
  return { rows, cut: false };
}

type Workbook = { sheets: XlsxSheet[]; sheetCount: number };
/** Parsing and loading tables both read the workbook: the same bytes are parsed once. */
const parsed = new WeakMap<Uint8Array, Promise<Workbook>>();

/** Every sheet of a workbook (each part once, within the limits) with its rows; the workbook's sheet count. */
export function xlsxSheets(bytes: Uint8Array): Promise<Workbook> {
  let p = parsed.get(bytes);
  if (!p) parsed.set(bytes, (p = readWorkbook(bytes)));
  return p;
}

async function readWorkbook(bytes: Uint8Array): Promise<Workbook> {
  const slicer = new Slicer();
  const zip = new OfficeZip(bytes, "XLSX", slicer);
  const workbook = await zip.text("xl/workbook.xml");
  if (!workbook) throw new UnparseableDocumentError("The file is not a readable XLSX document (no workbook)");
  const rels = relationships(await zip.text("xl/_rels/workbook.xml.rels"), "xl/");
  const shared: string[] = [];
  for (const m of (await zip.text("xl/sharedStrings.xml")).matchAll(/<si>([\s\S]*?)<\/si>/g)) {
    shared.push(runsText(m[1], "t"));
    await slicer.tick();
  }
  const dates = dateStyles(await zip.text("xl/styles.xml"));

  const out: XlsxSheet[] = [];
  const read = new Set<string>();
  let rowBudget = XLSX_LIMITS.maxRows;
  const sheets = [...workbook.matchAll(/<sheet\b[^>]*>/g)].map((m) => ({ name: decodeXmlEntities(attr(m[0], "name") ?? "Sheet"), rid: attr(m[0], "r:id") }));
  for (const sheet of sheets) {
    const part = (sheet.rid && rels.get(sheet.rid)) || "";
    // A part is read once, whichever sheets point at it; at most maxSheets parts.
    if (!zip.entries.has(part) || read.has(part) || read.size >= XLSX_LIMITS.maxSheets) continue;
    read.add(part);
    const xml = await zip.text(part);
    const { rows, cut } = await sheetRows(xml, { name: sheet.name, shared, dates, slicer }, rowBudget);
    rowBudget -= rows.length;
    out.push({ name: sheet.name, rows, cut });
  }
  return { sheets: out, sheetCount: sheets.length };
}

/** The cells a sparse row has, in order. */
export const presentCells = (row: string[]): string[] => row.filter(() => true);

/** XLSX: each sheet's rows with their header row as context (like CSV), one heading per sheet. */
export async function parseXlsx(bytes: Uint8Array): Promise<ParsedDocument> {
  const { sheets, sheetCount } = await xlsxSheets(bytes);
  const sections: ParsedSection[] = [];
  const md: string[] = [];
  const slicer = new Slicer();
  for (const { name, rows } of sheets) {
    sections.push(...(await tableSections(rows, [name], slicer)));
    md.push(`## ${name}\n\n${rows.map((r) => presentCells(r).join(" | ")).join("\n")}`);
  }
  if (!sections.length) throw new UnparseableDocumentError("The spreadsheet has no cells with content");
  return { sections, pageCount: sheetCount, markdown: md.join("\n\n") };
}

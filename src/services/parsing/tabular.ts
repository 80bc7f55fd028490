import { Slicer } from "../../lib/slices";
import { estimateTokens, CHUNK_TARGET_TOKENS } from "./chunker";
import { UnparseableDocumentError, type ParsedSection } from "./types";

/** The delimiter of a CSV file, sniffed from its first line: , ; tab or |. */
export function csvDelimiter(text: string): string {
  const firstLine = text.slice(0, text.indexOf("\n") === -1 ? text.length : text.indexOf("\n"));
  const candidates = [",", ";", "\t", "|"];
  return candidates.reduce((best, d) => (firstLine.split(d).length > firstLine.split(best).length ? d : best), ",");
}

/**
 * RFC 4180 CSV rows one at a time (quoted fields, "" escapes, newlines in
 * quotes), skipping blank rows: large files are read without holding every row.
 */
export function* csvRows(text: string, delimiter = csvDelimiter(text)): Generator<string[]> {
  let row: string[] = [];
  let field = "";
  let quoted = false;
  const blank = (r: string[]) => !r.some((f) => f.trim() !== "");
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === delimiter) {
      row.push(field);
      field = "";
    } else if (ch === "\n") {
      row.push(field);
      if (!blank(row)) yield row;
      row = [];
      field = "";
    } else if (ch !== "\r") field += ch;
  }
  if (field !== "" || row.length) {
    row.push(field);
    if (!blank(row)) yield row;
  }
}

/** RFC 4180 CSV (quoted fields, "" escapes, newlines in quotes); the delimiter is sniffed from the first line. */
export async function parseCsv(text: string, slicer = new Slicer()): Promise<string[][]> {
  const rows: string[][] = [];
  for (const row of csvRows(text)) {
    rows.push(row);
    if (slicer.due(row.length)) await slicer.pause();
  }
  return rows;
}

/**
 * Table rows as text with their header as context ("Name: Ada; Role: CTO"),
 * grouped into sections that fit a chunk, headed "Rows i–j" under `headings`.
 * Rows may be sparse (a missing cell is a hole); only present cells are read.
 */
export async function tableSections(rows: string[][], headings: string[] = [], slicer = new Slicer()): Promise<ParsedSection[]> {
  if (!rows.length) return [];
  const header = rows[0].map((h, i) => h.trim() || `Column ${i + 1}`);
  const dataRows = rows.length > 1 ? rows.slice(1) : rows;
  const lines: string[] = [];
  for (const r of dataRows) {
    const cells: string[] = [];
    r.forEach((raw, i) => {
      const v = raw.trim();
      if (v !== "") cells.push(rows.length > 1 ? `${header[i] ?? `Column ${i + 1}`}: ${v}` : v);
    });
    lines.push(cells.join("; "));
    if (slicer.due(1 + cells.length)) await slicer.pause();
  }
  const sections: ParsedSection[] = [];
  let start = 0;
  let buf: string[] = [];
  let tokens = 0;
  const flush = (end: number) => {
    if (!buf.length) return;
    sections.push({ headings: [...headings, `Rows ${start + 1}–${end}`], text: buf.join("\n") });
    buf = [];
    tokens = 0;
  };
  lines.forEach((line, i) => {
    const t = estimateTokens(line);
    if (buf.length && tokens + t > CHUNK_TARGET_TOKENS) {
      flush(i);
      start = i;
    }
    buf.push(line);
    tokens += t;
  });
  flush(lines.length);
  return sections;
}

function scalar(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "string") return v;
  return String(v);
}

/** `a.b[0].c: value` lines for every leaf under `value`. */
export function flattenJson(value: unknown, path: string, out: string[], depth = 0): void {
  if (depth > 64) {
    out.push(`${path}: ${JSON.stringify(value).slice(0, 500)}`);
    return;
  }
  if (Array.isArray(value)) {
    if (!value.length) out.push(`${path}: []`);
    value.forEach((v, i) => flattenJson(v, `${path}[${i}]`, out, depth + 1));
  } else if (value && typeof value === "object") {
    const entries = Object.entries(value);
    if (!entries.length) out.push(`${path}: {}`);
    for (const [k, v] of entries) flattenJson(v, path ? `${path}.${k}` : k, out, depth + 1);
  } else out.push(`${path || "value"}: ${scalar(value)}`);
}

/**
 * JSON as flattened key paths. An array of records becomes one line per
 * record ("Items i–j" sections); an object becomes one section per top-level key.
 */
export async function jsonSections(text: string, slicer = new Slicer()): Promise<ParsedSection[]> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new UnparseableDocumentError(`The file is not valid JSON (${(e as Error).message.slice(0, 200)})`);
  }
  await slicer.pause();
  if (Array.isArray(data)) {
    const lines: string[] = [];
    for (const [i, item] of data.entries()) {
      const out: string[] = [];
      flattenJson(item, "", out);
      lines.push(`[${i}] ${out.join("; ")}`);
      if (slicer.due(1 + out.length)) await slicer.pause();
    }
    const sections: ParsedSection[] = [];
    let buf: string[] = [];
    let tokens = 0;
    let start = 0;
    lines.forEach((line, i) => {
      if (buf.length && tokens + estimateTokens(line) > CHUNK_TARGET_TOKENS) {
        sections.push({ headings: [`Items ${start + 1}–${i}`], text: buf.join("\n") });
        buf = [];
        tokens = 0;
        start = i;
      }
      buf.push(line);
      tokens += estimateTokens(line);
    });
    if (buf.length) sections.push({ headings: [`Items ${start + 1}–${lines.length}`], text: buf.join("\n") });
    return sections;
  }
  if (data && typeof data === "object") {
    const sections: ParsedSection[] = [];
    const top: string[] = [];
    for (const [k, v] of Object.entries(data)) {
      if (v && typeof v === "object") {
        const out: string[] = [];
        flattenJson(v, k, out);
        sections.push({ headings: [k], text: out.join("\n") });
        if (slicer.due(1 + out.length)) await slicer.pause();
      } else top.push(`${k}: ${scalar(v)}`);
    }
    if (top.length) sections.unshift({ headings: [], text: top.join("\n") });
    return sections;
  }
  return [{ headings: [], text: scalar(data) }];
}

import type { DocumentKind } from "../documents/types";
import { xlsxSheets } from "../parsing/xlsx";
import { csvDelimiter, csvRows } from "../parsing/tabular";
import { decodeText } from "../parsing/types";

/** A table found in a document, before typing: its header and a way to read its data rows (more than once). */
export interface TableSource {
  /** Sheet name (XLSX) or top-level key (JSON object of arrays); none for CSV and a JSON array. */
  part?: string;
  /** Header and rows may be sparse (XLSX): a missing cell is a hole, read as "". */
  header: string[];
  rows(): Iterable<string[]>;
  /** Rows of the file were left out before this point (the document's row limit). */
  cut?: boolean;
}

/** Kinds that can hold tables. */
export const TABULAR_KINDS: ReadonlySet<DocumentKind> = new Set(["csv", "xlsx", "json"]);

/** Keys a JSON array of records may spread over: bounded so one file cannot make thousands of columns. */
const MAX_JSON_KEYS = 500;

function fromRows(all: string[][], part?: string, cut = false): TableSource | null {
  if (!all.length) return null;
  const [header, ...rows] = all;
  return { part, header, rows: () => rows, cut };
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

/** An array of records as a table: keys in first-seen order, one level of nested objects flattened ("owner.name"). */
function fromRecords(items: unknown[], part?: string): TableSource | null {
  if (!items.length) return null;
  if (!items.every((x) => x && typeof x === "object" && !Array.isArray(x))) {
    // An array of scalars (or mixed): one column.
    return { part, header: ["value"], rows: () => items.map((x) => [cellText(x)]) };
  }
  const keys = new Map<string, number>();
  const flat = (items as Record<string, unknown>[]).map((item) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(item)) {
      if (v && typeof v === "object" && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) out[`${k}.${k2}`] = v2;
      else out[k] = v;
    }
    for (const k of Object.keys(out)) if (!keys.has(k) && keys.size < MAX_JSON_KEYS) keys.set(k, keys.size);
    return out;
  });
  const header = [...keys.keys()];
  return { part, header, rows: () => flat.map((r) => header.map((k) => cellText(r[k]))) };
}

/**
 * The tables of a CSV (one), XLSX (one per sheet with content) or JSON
 * document (an array of records; or an object whose values include arrays of
 * records, one table per such key). Anything else has none.
 */
export async function tableSources(kind: DocumentKind, bytes: Uint8Array): Promise<TableSource[]> {
  if (kind === "csv") {
    const text = decodeText(bytes, "CSV file");
    const delimiter = csvDelimiter(text);
    const first = csvRows(text, delimiter).next();
    if (first.done) return [];
    const header = first.value;
    return [
      {
        header,
        *rows() {
          let skipped = false;
          for (const r of csvRows(text, delimiter)) {
            if (!skipped) skipped = true;
            else yield r;
          }
        },
      },
    ];
  }
  if (kind === "xlsx") {
    return (await xlsxSheets(bytes)).sheets.map((s) => fromRows(s.rows, s.name, s.cut)).filter((s): s is TableSource => !!s);
  }
  if (kind === "json") {
    let data: unknown;
    try {
      data = JSON.parse(decodeText(bytes, "JSON file"));
    } catch {
      return [];
    }
    if (Array.isArray(data)) return [fromRecords(data)].filter((s): s is TableSource => !!s);
    if (data && typeof data === "object") {
      return Object.entries(data)
        .filter(([, v]) => Array.isArray(v) && v.length && v.every((x) => x && typeof x === "object" && !Array.isArray(x)))
        .map(([k, v]) => fromRecords(v as unknown[], k))
        .filter((s): s is TableSource => !!s);
    }
  }
  return [];
}

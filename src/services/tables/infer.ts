/**
 * Column types from the values of a column: `integer` when every non-empty
 * value is a whole number, `real` when every one is a number, otherwise
 * `text`; a text column whose every value is a date (ISO, 3/14/2024 or
 * 14.03.2024, "Mar 14, 2024", with or without a time) is stored as ISO 8601
 * text (`format: "date"` or `"datetime"`), so it sorts and compares, and
 * SQLite's date functions read it. Numbers may carry a currency sign and
 * thousands separators ("$1,234.50"); identifiers with leading zeros ("007",
 * zip codes) stay text. Empty cells are NULL; "NA", "N/A", "null", "-" are
 * NULL in a numeric or date column and text elsewhere.
 */

export type ColumnType = "integer" | "real" | "text";
export type ColumnFormat = "date" | "datetime";
export type Cell = string | number | null;

export interface ColumnSpec {
  /** Cleaned SQL name. */
  name: string;
  /** The header as it was in the file. */
  source: string;
  type: ColumnType;
  format?: ColumnFormat;
  /** For slash or dot dates: which part is the month. */
  dateOrder?: "mdy" | "dmy";
}

/** Longer text cells are cut to this many characters. */
export const MAX_CELL_CHARS = 10_000;

const NULL_TOKENS = new Set(["na", "n/a", "null", "none", "nan", "-", "--", "—"]);
const NUMBER = /^([+-])?\s?[$€£¥]?\s?(\d+|\d{1,3}(?:,\d{3})+)(\.\d+)?(?:[eE]([+-]?\d+))?$/;
const ISO = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?\s*(Z|[+-]\d{2}:?\d{2})?)?$/i;
const YMD_SLASH = /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/;
const PARTS_YEAR_LAST = /^(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const MONTH_FIRST = /^([A-Za-z]{3,9})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$/;
const DAY_FIRST = /^(\d{1,2})(?:st|nd|rd|th)? ([A-Za-z]{3,9})\.?,? (\d{4})$/;
const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();
const validDate = (y: number, m: number, d: number) => y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m);

/** 1-12 for "Mar", "march", "Sept"; 0 otherwise. */
function monthOf(word: string): number {
  const w = word.toLowerCase();
  return MONTHS.findIndex((m) => w === m || w === m.slice(0, 3) || (m === "september" && w === "sept")) + 1;
}

function isoDate(y: number, m: number, d: number, time?: { h: number; mi: number; s: number }): string {
  const date = `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
  return time ? `${date}T${pad(time.h)}:${pad(time.mi)}:${pad(time.s)}` : date;
}

interface ParsedDate {
  iso: string;
  hasTime: boolean;
}

/** A date in any of the accepted shapes except day/month order (slash and dot dates take `order`). */
export function parseDate(v: string, order: "mdy" | "dmy" = "mdy"): ParsedDate | null {
  let m = ISO.exec(v);
  if (m) {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (!validDate(y, mo, d)) return null;
    if (m[4] === undefined) return { iso: isoDate(y, mo, d), hasTime: false };
    const h = Number(m[4]);
    const mi = Number(m[5]);
    const s = Number(m[6] ?? 0);
    if (h > 23 || mi > 59 || s > 59) return null;
    if (!m[8]) return { iso: isoDate(y, mo, d, { h, mi, s }), hasTime: true };
    // With a zone: stored in UTC.
    const zone = m[8].toUpperCase();
    let offsetMin = 0;
    if (zone !== "Z") {
      const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
      offsetMin = (z[1] === "-" ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
    }
    const t = Date.UTC(y, mo - 1, d, h, mi, s) - offsetMin * 60_000;
    return { iso: new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z"), hasTime: true };
  }
  m = YMD_SLASH.exec(v);
  if (m) {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    return validDate(y, mo, d) ? { iso: isoDate(y, mo, d), hasTime: false } : null;
  }
  m = PARTS_YEAR_LAST.exec(v);
  if (m) {
    const [a, b, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const [mo, d] = order === "mdy" ? [a, b] : [b, a];
    if (!validDate(y, mo, d)) return null;
    if (m[4] === undefined) return { iso: isoDate(y, mo, d), hasTime: false };
    const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
    if (h > 23 || mi > 59 || s > 59) return null;
    return { iso: isoDate(y, mo, d, { h, mi, s }), hasTime: true };
  }
  m = MONTH_FIRST.exec(v) ?? null;
  if (m) {
    const [mo, d, y] = [monthOf(m[1]), Number(m[2]), Number(m[3])];
    return mo && validDate(y, mo, d) ? { iso: isoDate(y, mo, d), hasTime: false } : null;
  }
  m = DAY_FIRST.exec(v);
  if (m) {
    const [d, mo, y] = [Number(m[1]), monthOf(m[2]), Number(m[3])];
    return mo && validDate(y, mo, d) ? { iso: isoDate(y, mo, d), hasTime: false } : null;
  }
  return null;
}

/** A number in the accepted shapes, or null. `integer` tells whole numbers apart. */
export function parseNumber(v: string): { value: number; integer: boolean } | null {
  const m = NUMBER.exec(v);
  if (!m) return null;
  const digits = m[2].replace(/,/g, "");
  // Leading zeros mark identifiers (zip codes, "007"), not quantities.
  if (digits.length > 1 && digits[0] === "0" && !m[3]) return null;
  const text = `${m[1] ?? ""}${digits}${m[3] ?? ""}${m[4] !== undefined ? `e${m[4]}` : ""}`;
  const value = Number(text);
  if (!Number.isFinite(value)) return null;
  const integer = !m[3] && m[4] === undefined && Number.isSafeInteger(value);
  return { value, integer };
}

const isNullToken = (v: string) => NULL_TOKENS.has(v.toLowerCase());

/** Watches one column's values, one at a time; `spec()` gives the type they allow. */
export class ColumnInference {
  private seen = 0;
  private integer = true;
  private number = true;
  private date = true;
  private time = false;
  private mdy = true;
  private dmy = true;

  observe(raw: string): void {
    const v = raw.trim();
    if (v === "" || isNullToken(v)) return;
    this.seen++;
    if (this.number) {
      const n = parseNumber(v);
      if (!n) this.number = this.integer = false;
      else if (!n.integer) this.integer = false;
    }
    if (this.date) {
      if (PARTS_YEAR_LAST.test(v)) {
        const mdy = parseDate(v, "mdy");
        const dmy = parseDate(v, "dmy");
        this.mdy &&= !!mdy;
        this.dmy &&= !!dmy;
        if (!this.mdy && !this.dmy) this.date = false;
        if ((mdy ?? dmy)?.hasTime) this.time = true;
      } else {
        const d = parseDate(v);
        if (!d) this.date = false;
        else if (d.hasTime) this.time = true;
      }
    }
  }

  spec(name: string, source: string): ColumnSpec {
    if (this.seen && this.integer) return { name, source, type: "integer" };
    if (this.seen && this.number) return { name, source, type: "real" };
    if (this.seen && this.date) return { name, source, type: "text", format: this.time ? "datetime" : "date", dateOrder: this.mdy ? "mdy" : "dmy" };
    return { name, source, type: "text" };
  }
}

/** One cell converted to its column's type (NULL when empty or when it does not fit). */
export function convertCell(raw: string | undefined, col: ColumnSpec): Cell {
  const v = (raw ?? "").trim();
  if (v === "") return null;
  if (col.type === "integer" || col.type === "real") {
    if (isNullToken(v)) return null;
    return parseNumber(v)?.value ?? null;
  }
  if (col.format) {
    if (isNullToken(v)) return null;
    return parseDate(v, col.dateOrder)?.iso ?? v.slice(0, MAX_CELL_CHARS);
  }
  return v.slice(0, MAX_CELL_CHARS);
}

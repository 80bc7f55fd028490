/**
 * Table and column names: lower snake case ASCII, never a SQL keyword, never
 * starting with a digit or an underscore (names starting with `_` are the
 * store's own; SQLite reserves `sqlite_*`, which gets a prefix:
 * `sqlite_master` -> `t_sqlite_master`), at most 63 characters, made unique.
 */

/** SQLite's keywords (https://sqlite.org/lang_keywords.html): a name equal to one gets a suffix. */
const KEYWORDS = new Set(
  (
    "abort action add after all alter always analyze and as asc attach autoincrement before begin between by cascade case cast " +
    "check collate column commit conflict constraint create cross current current_date current_time current_timestamp database " +
    "default deferrable deferred delete desc detach distinct do drop each else end escape except exclude exclusive exists explain " +
    "fail filter first following for foreign from full generated glob group groups having if ignore immediate in index indexed " +
    "initially inner insert instead intersect into is isnull join key last left like limit match materialized natural no not " +
    "nothing notnull null nulls of offset on or order others outer over partition plan pragma preceding primary query raise range " +
    "recursive references regexp reindex release rename replace restrict returning right rollback row rows savepoint select set " +
    "table temp temporary then ties to transaction trigger unbounded union unique update using vacuum values view virtual when " +
    "where window with without rowid"
  ).split(" "),
);

export const MAX_NAME_LENGTH = 63;

/** "Q3 Sales (EUR).csv" -> "q3_sales_eur". Empty when nothing usable is left. */
export function snakeCase(raw: string): string {
  return raw
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, MAX_NAME_LENGTH)
    .replace(/_+$/g, "");
}

/**
 * A safe identifier from `raw`, or `fallback` when nothing is left; `prefix`
 * goes before a leading digit ("2024" -> "c_2024") and before a name SQLite
 * reserves ("sqlite_master" -> "t_sqlite_master": SQLite refuses to create a
 * table whose name starts with `sqlite_`), `suffix` after a keyword.
 */
export function cleanName(raw: string, fallback: string, prefix: string, suffix: string): string {
  let name = snakeCase(raw) || fallback;
  if (/^[0-9]/.test(name) || name.startsWith("sqlite")) name = `${prefix}${name}`.slice(0, MAX_NAME_LENGTH).replace(/_+$/g, "");
  if (KEYWORDS.has(name)) name = `${name}${suffix}`;
  return name;
}

/** The table name of a file (and sheet): extension dropped, "sales.xlsx" + "Q3" -> "sales_q3". */
export function tableBaseName(filename: string, sheet?: string): string {
  const base = filename.replace(/\.[A-Za-z0-9]{1,5}$/, "");
  const file = cleanName(base, "table", "t_", "_table");
  if (sheet === undefined) return file;
  const s = snakeCase(sheet) || "sheet";
  return cleanName(`${file}_${s}`, "table", "t_", "_table");
}

/** `name`, or `name_2`, `name_3`, ... : the first not in `taken` (which is updated). */
export function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let i = 2; taken.has(candidate); i++) {
    const tail = `_${i}`;
    candidate = `${name.slice(0, MAX_NAME_LENGTH - tail.length)}${tail}`;
  }
  taken.add(candidate);
  return candidate;
}

/** Cleaned, unique column names for a header row ("Unit Price" -> "unit_price", "" -> "column_3"). */
export function columnNames(header: string[]): string[] {
  const taken = new Set<string>();
  return header.map((h, i) => uniqueName(cleanName(h.trim(), `column_${i + 1}`, "c_", "_"), taken));
}

/** Double-quoted SQL identifier (names are already safe; this is belt and braces). */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

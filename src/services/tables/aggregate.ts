import { stem, words } from "../../lib/text";
import { quoteIdent } from "./names";
import type { StoredColumn, TableInfo } from "./catalog";

/**
 * The offline plan of `sql__query` for `local-extractive`, which cannot write
 * SQL: a question that names a table (or its columns) and asks a simple
 * aggregate — how many / count, total / sum, average, minimum, maximum,
 * optionally "by <column>" — becomes one deterministic query. Anything else
 * is left to search (null).
 */

export type Aggregate = "count" | "sum" | "avg" | "min" | "max";

export interface AggregatePlan {
  table: TableInfo;
  aggregate: Aggregate;
  /** The measured column (null for a count). */
  column: StoredColumn | null;
  groupBy: StoredColumn | null;
  sql: string;
}

const AGGREGATES: Array<[Aggregate, RegExp]> = [
  ["avg", /\b(?:average|avg|mean)\b/i],
  ["count", /\b(?:how many|count|number of)\b/i],
  ["sum", /\b(?:total|sum|overall|altogether|combined)\b/i],
  ["min", /\b(?:min|minimum|lowest|smallest|least|cheapest|earliest|fewest)\b/i],
  ["max", /\b(?:max|maximum|highest|largest|biggest|greatest|latest|most expensive)\b/i],
];

/** Measure columns chosen when the question names none ("total sales"): money-like names first. */
const MEASURE_HINT = /^(amount|total|revenue|sales|value|price|cost|profit|income|spend|quantity|qty|units|count)(_|$)|_(amount|total|revenue|sales|value|price|cost)$/;

const tokens = (s: string) => words(s.replace(/_/g, " ")).map(stem);
const numeric = (c: StoredColumn) => c.type === "integer" || c.type === "real";

/** Where (token index) the column's words appear in a row in the question, or -1. */
function mentionAt(q: string[], c: StoredColumn): number {
  for (const label of [c.name, c.source]) {
    const t = tokens(label);
    if (!t.length) continue;
    for (let i = 0; i + t.length <= q.length; i++) if (t.every((w, j) => q[i + j] === w)) return i;
  }
  return -1;
}

function tableScore(q: Set<string>, t: TableInfo): number {
  const nameWords = new Set([...tokens(t.name), ...tokens(t.filename.replace(/\.[a-z0-9]+$/i, "")), ...tokens(t.part ?? "")].filter((w) => w.length >= 3 && !/^\d+$/.test(w)));
  let score = 0;
  for (const w of nameWords) if (q.has(w)) score += 2;
  const qList = [...q];
  for (const c of t.columns) if (mentionAt(qList, c) >= 0) score += 1;
  return score;
}

export function planAggregate(question: string, tables: TableInfo[]): AggregatePlan | null {
  const found = AGGREGATES.find(([, re]) => re.test(question));
  if (!found || !tables.length) return null;
  let aggregate = found[0];
  const q = tokens(question);
  const qSet = new Set(q);
  const ranked = tables.map((t) => ({ t, s: tableScore(qSet, t) })).sort((a, b) => b.s - a.s);
  if (!ranked[0].s || (ranked[1] && ranked[1].s === ranked[0].s)) return null; // none named, or ambiguous
  const table = ranked[0].t;

  // "by region", "per rep", "for each month", "in each region"
  let groupBy: StoredColumn | null = null;
  const by = /\b(?:by|per|for each|in each|for every|grouped by|broken down by)\s+(?:the\s+|each\s+)?([\p{L}\p{N} _-]{1,60})/iu.exec(question);
  if (by) {
    const after = tokens(by[1]);
    groupBy = table.columns.find((c) => mentionAt(after, c) === 0) ?? null;
  }
  const mentioned = table.columns
    .filter((c) => c !== groupBy)
    .map((c) => ({ c, at: mentionAt(q, c) }))
    .filter((m) => m.at >= 0)
    .sort((a, b) => a.at - b.at);

  let column: StoredColumn | null = null;
  if (aggregate !== "count") {
    const datesOk = aggregate === "min" || aggregate === "max";
    column =
      mentioned.find((m) => numeric(m.c) || (datesOk && m.c.format))?.c ??
      (mentioned.length ? null : (table.columns.find((c) => numeric(c) && MEASURE_HINT.test(c.name)) ?? (table.columns.filter(numeric).length === 1 ? table.columns.find(numeric)! : null)));
    if (!column) {
      // "how many" with a named measure is a sum ("how many units"); otherwise nothing to measure.
      return null;
    }
  } else {
    const measure = mentioned.find((m) => numeric(m.c) && !/(^|_)(id|year|number|no)$/.test(m.c.name));
    if (measure && /\bhow many\b/i.test(question)) {
      aggregate = "sum";
      column = measure.c;
    }
  }

  const from = quoteIdent(table.name);
  const alias = aggregate === "count" ? "count" : `${aggregate === "avg" ? "average" : aggregate === "sum" ? "total" : aggregate}_${column!.name}`;
  const expr =
    aggregate === "count"
      ? "COUNT(*)"
      : aggregate === "avg"
        ? `ROUND(AVG(${quoteIdent(column!.name)}), 2)`
        : aggregate === "sum" && column!.type === "real"
          ? `ROUND(SUM(${quoteIdent(column!.name)}), 2)`
          : `${aggregate.toUpperCase()}(${quoteIdent(column!.name)})`;
  const sql = groupBy
    ? `SELECT ${quoteIdent(groupBy.name)}, ${expr} AS ${alias} FROM ${from} GROUP BY ${quoteIdent(groupBy.name)} ORDER BY ${alias} DESC LIMIT 50`
    : `SELECT ${expr} AS ${alias} FROM ${from}`;
  return { table, aggregate, column, groupBy, sql };
}

const fmt = (v: unknown) => (typeof v === "number" ? String(Math.round(v * 100) / 100) : v === null ? "none" : String(v));

/**
 * The result as sentences `local-extractive` can quote: the figure(s) in the
 * words of the question, then the SQL that produced them.
 */
export function describeAggregate(plan: AggregatePlan, rows: unknown[][]): string {
  const what =
    plan.aggregate === "count"
      ? "Number of rows"
      : `${{ sum: "Total", avg: "Average", min: "Minimum", max: "Maximum" }[plan.aggregate as Exclude<Aggregate, "count">]} ${plan.column!.source || plan.column!.name}`;
  const source = `in ${plan.table.part ? `${plan.table.filename} (sheet ${plan.table.part})` : plan.table.filename} (table ${plan.table.name})`;
  let result: string;
  if (plan.groupBy) {
    const shown = rows.slice(0, 12).map((r) => `${fmt(r[0])} ${fmt(r[1])}`);
    result = `${what} by ${plan.groupBy.source || plan.groupBy.name} ${source}: ${shown.join("; ")}${rows.length > 12 ? `; and ${rows.length - 12} more` : ""}`;
  } else {
    result = `${what} ${source}: ${fmt(rows[0]?.[0])}`;
  }
  return `${result}.\n\nComputed with SQL over table ${plan.table.name}: ${plan.sql}`;
}

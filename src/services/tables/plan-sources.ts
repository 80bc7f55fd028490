import type { StoredColumn } from "./catalog";
import { quoteIdent } from "./names";
import { PlanBound, type PlanSources, type PlanStep, UnboundedPlanError } from "./plan-cost";
import type { ProgramStep } from "./program";
import { RowCostError, rowWeight, type ValueSources } from "./row-cost";
import { callArities } from "./sql-guard";

/**
 * What the cost bounds (plan-cost.ts, row-cost.ts) need from a knowledge
 * base's store: the row counts of its tables, the aliases a statement gives
 * them, and per column the rows of its most frequent value and its longest
 * value in bytes (each computed once, a pass over the table, and kept in
 * `_kb_colstats` until the table goes).
 */

export const COLSTATS = `CREATE TABLE IF NOT EXISTS _kb_colstats (
  table_name TEXT NOT NULL, column_name TEXT NOT NULL, max_frequency INTEGER, max_bytes INTEGER, PRIMARY KEY (table_name, column_name))`;

/**
 * Row visits a statement may cost (rows from its plan, times what a row's
 * expressions weigh): past this it is refused before it runs. SQLite visits
 * 20 to 100 million plain rows a second on an idle machine, and five times
 * fewer on a busy one (measured: 4.9e7 visits with a concatenation took 4.8 s
 * at load 10 on two cores); 2e7 keeps the slowest case near 2 s.
 */
export const MAX_PLAN_ROWS = 20_000_000;

/** Words that may follow a table name and are not its alias. */
const NOT_ALIASES = new Set(["where", "join", "inner", "left", "right", "full", "cross", "natural", "outer", "on", "using", "group", "order", "limit", "union", "except", "intersect", "window", "having", "indexed", "not", "as"]);

type Catalog = Map<string, { rows: number; columns: Set<string> }>;

/** Alias -> the tables it may stand for, read from the statement's text ("FROM sales s", "JOIN sales AS s"). */
function aliases(statement: string, catalog: Catalog): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (alias: string, table: string) => out.set(alias, (out.get(alias) ?? new Set()).add(table));
  for (const name of catalog.keys()) {
    add(name, name);
    for (const m of statement.matchAll(new RegExp(`(?:^|[^\\w"])"?${name}"?\\s+(?:as\\s+)?"?([A-Za-z_]\\w*)"?`, "gi"))) {
      if (!NOT_ALIASES.has(m[1].toLowerCase())) add(m[1], name);
    }
  }
  return out;
}

/** The store as the plan bound sees it; `stats: false` takes a table's row count for every frequency (no GROUP BY). */
export function storeSources(sql: SqlStorage, statement: string, stats = true): PlanSources {
  const catalog: Catalog = new Map(
    sql
      .exec<{ name: string; row_count: number; columns: string }>("SELECT name, row_count, columns FROM _kb_tables")
      .toArray()
      .map((r) => [r.name, { rows: r.row_count, columns: new Set((JSON.parse(r.columns) as StoredColumn[]).map((c) => c.name)) }]),
  );
  const byAlias = aliases(statement, catalog);
  return {
    targets: (name) => [...(byAlias.get(name) ?? [])],
    rows: (table) => catalog.get(table)?.rows ?? 0,
    maxFrequency: (table, column) => {
      const info = catalog.get(table)!;
      if (!stats || !info.columns.has(column)) return info.rows;
      return maxFrequency(sql, table, column);
    },
    largestTable: () => Math.max(0, ...[...catalog.values()].map((t) => t.rows)),
  };
}

function maxFrequency(sql: SqlStorage, table: string, column: string): number {
  const cached = sql.exec<{ n: number | null }>("SELECT max_frequency AS n FROM _kb_colstats WHERE table_name = ? AND column_name = ?", table, column).toArray()[0];
  if (cached && cached.n !== null) return cached.n;
  const n = sql.exec<{ n: number | null }>(`SELECT max(c) AS n FROM (SELECT count(*) AS c FROM ${quoteIdent(table)} GROUP BY ${quoteIdent(column)})`).one().n ?? 0;
  sql.exec(
    `INSERT INTO _kb_colstats (table_name, column_name, max_frequency) VALUES (?, ?, ?)
     ON CONFLICT (table_name, column_name) DO UPDATE SET max_frequency = excluded.max_frequency`,
    table, column, n,
  );
  return n;
}

/** Longest value in bytes of each of a table's columns, in order (one pass over the table, then kept). */
function columnBytes(sql: SqlStorage, table: string, columns: string[]): number[] {
  const cached = new Map(
    sql
      .exec<{ c: string; n: number | null }>("SELECT column_name AS c, max_bytes AS n FROM _kb_colstats WHERE table_name = ?", table)
      .toArray()
      .map((r) => [r.c, r.n]),
  );
  if (columns.every((c) => typeof cached.get(c) === "number")) return columns.map((c) => cached.get(c)!);
  const row = sql
    .exec(`SELECT ${columns.map((c) => `max(length(CAST(${quoteIdent(c)} AS BLOB)))`).join(", ")} FROM ${quoteIdent(table)}`)
    .raw()
    .next().value as Array<number | null>;
  const bytes = columns.map((_, i) => Number(row?.[i] ?? 0));
  columns.forEach((c, i) =>
    sql.exec(
      `INSERT INTO _kb_colstats (table_name, column_name, max_bytes) VALUES (?, ?, ?)
       ON CONFLICT (table_name, column_name) DO UPDATE SET max_bytes = excluded.max_bytes`,
      table, c, bytes[i],
    ),
  );
  return bytes;
}

/** Column value sizes of the store's user tables, by root page and column number; call arities from the statement. */
function storeValueSources(sql: SqlStorage, statement: string): ValueSources {
  const arities = callArities(statement);
  const tables = new Map(
    sql
      .exec<{ name: string; rootpage: number; columns: string }>(
        "SELECT t.name, m.rootpage, t.columns FROM _kb_tables t JOIN sqlite_master m ON m.name = t.name AND m.type = 'table'",
      )
      .toArray()
      .map((r) => [r.rootpage, { name: r.name, columns: (JSON.parse(r.columns) as StoredColumn[]).map((c) => c.name) }]),
  );
  const known = new Map<number, number[]>();
  return {
    arity: (name) => arities.get(name),
    columnBytes(rootpage, column) {
      const t = tables.get(rootpage);
      if (!t) return null;
      if (!known.has(rootpage)) known.set(rootpage, columnBytes(sql, t.name, t.columns));
      return known.get(rootpage)![column] ?? null;
    },
  };
}

/** The statement's plan bound in rows visited, or the reason it cannot be bounded. */
function planRows(sql: SqlStorage, statement: string, outerLimit: number): { rows: number } | { refusal: string } {
  let plan: PlanStep[];
  try {
    plan = sql.exec<{ id: number; parent: number; detail: string }>(`EXPLAIN QUERY PLAN ${statement}`).toArray();
  } catch {
    return { rows: 0 }; // compileCheck already gave the database's reason
  }
  try {
    // Frequencies cost a GROUP BY the first time: looked up only when the bound without them is too high.
    const rough = new PlanBound(plan, storeSources(sql, statement, false), outerLimit).total().work;
    if (rough <= MAX_PLAN_ROWS) return { rows: rough };
    return { rows: new PlanBound(plan, storeSources(sql, statement), outerLimit).total().work };
  } catch (e) {
    if (e instanceof UnboundedPlanError) return { refusal: e.message };
    throw e;
  }
}

/**
 * What a statement may cost before it runs: its plan's row bound times the
 * weight of a row's expressions (both conservative), or the reason it has no
 * bound (a recursive CTE, a plan step or a construct that cannot be bounded).
 */
export function statementCost(
  sql: SqlStorage,
  statement: string,
  program: ProgramStep[],
  outerLimit: number,
): { rows: number; weight: number; cost: number } | { refusal: string } {
  const plan = planRows(sql, statement, outerLimit);
  if ("refusal" in plan) return plan;
  try {
    const weight = rowWeight(program, storeValueSources(sql, statement));
    return { rows: plan.rows, weight, cost: plan.rows * weight };
  } catch (e) {
    if (e instanceof RowCostError) return { refusal: e.message };
    throw e;
  }
}

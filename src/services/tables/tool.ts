import { ApiError } from "../../lib/errors";
import type { KnowledgeBase } from "../../db/schema";
import type { Passage } from "../../contracts/turn";
import type { Tool, ToolCallContext, ToolOutput, ToolProvider } from "../../contracts/tools";
import { describeAggregate, planAggregate, type AggregatePlan } from "./aggregate";
import { buildChart, CHART_INPUT_PROPERTIES, chartRequest } from "./chart";
import type { Cell } from "./infer";
import { hasTabularDocuments, listKbTables, runSql, type SqlResult } from "./service";
import type { TableInfo } from "./catalog";

/** Rows of a result rendered into the citable passage the model reads. */
export const PASSAGE_ROWS = 30;
/** Tables and columns described in the tool's description at most (its length stays bounded). */
const DESCRIBED_TABLES = 40;
const DESCRIBED_COLUMNS = 60;
const PROMPT_FIELD_MAX = 2_000;

function columnLine(t: TableInfo): string {
  const cols = t.columns.slice(0, DESCRIBED_COLUMNS).map((c) => `${c.name} ${c.type}${c.format ? ` (ISO ${c.format})` : ""}`);
  const more = t.columns.length > DESCRIBED_COLUMNS ? `, … ${t.columns.length - DESCRIBED_COLUMNS} more` : "";
  const from = t.part ? `${t.filename}, sheet ${t.part}` : t.filename;
  return `- ${t.name} (from "${from}", ${t.row_count} rows): ${cols.join(", ")}${more}`;
}

const field = (label: string, v: string | null) => (v && v.trim() ? `${label}: ${v.trim().slice(0, PROMPT_FIELD_MAX)}` : null);

/** The tool's description: what it is for, the schema, and the knowledge base's four SQL/chart prompt fields. */
export function sqlToolDescription(kb: KnowledgeBase, tables: TableInfo[]): string {
  const shown = tables.slice(0, DESCRIBED_TABLES);
  return [
    `Run ONE read-only SQL query (SQLite dialect: SELECT or WITH) over the tables of the knowledge base "${kb.name}", loaded from its spreadsheets and data files. ` +
      "Use it for numbers — counts, totals, averages, rankings, comparisons — rather than searching text. " +
      "Returns at most 1,000 rows; the rows come back as a numbered passage you can cite. Aggregate in SQL instead of reading many rows. " +
      "Text comparisons are case-sensitive (use LOWER() or LIKE); dates are ISO 8601 text (use strftime/date).",
    `Tables:\n${shown.map(columnLine).join("\n")}${tables.length > shown.length ? `\n- … ${tables.length - shown.length} more tables` : ""}`,
    field("Instructions for writing queries", kb.sqlAgentInstructions),
    field("Additional SQL guidance", kb.sqlCustomPrompt),
    field("How to answer from the results", kb.sqlAnsweringInstructions),
    "To show the user a chart of the result, also pass `chart` (bar, line, point, area or arc) with `x` and `y` naming result columns (and optionally `color`, `chart_title`).",
    field("Chart instructions", kb.chartInstructions),
  ]
    .filter(Boolean)
    .join("\n\n");
}

const cellText = (v: Cell) => (v === null ? "" : String(v).replace(/\s+/g, " ").replace(/\|/g, "\\|").slice(0, 200));

/** The rows as a small Markdown table, with the query, for the citable passage. */
export function renderResult(query: string, r: SqlResult): string {
  const rows = r.rows.slice(0, PASSAGE_ROWS);
  const head = `| ${r.columns.map((c) => cellText(c)).join(" | ")} |\n| ${r.columns.map(() => "---").join(" | ")} |`;
  const body = rows.map((row) => `| ${row.map(cellText).join(" | ")} |`).join("\n");
  const count =
    r.rows.length > rows.length || r.truncated
      ? `First ${rows.length} of ${r.truncated ? `more than ${r.row_count}` : r.row_count} rows.`
      : `${r.row_count} row${r.row_count === 1 ? "" : "s"}.`;
  return `SQL: ${query.replace(/\s+/g, " ").trim()}\n\n${head}${body ? `\n${body}` : ""}\n\n${count}`;
}

/** Tables a query names (for the source's document and label). */
function tablesIn(query: string, tables: TableInfo[]): TableInfo[] {
  const lower = query.toLowerCase();
  return tables.filter((t) => new RegExp(`(^|[^a-z0-9_])"?${t.name}"?($|[^a-z0-9_])`).test(lower));
}

/** The result as a citable passage: the tables it read, and the offline plan's phrasing when it made the query. */
function resultPassage(query: string, result: SqlResult, tables: TableInfo[], plan: AggregatePlan | undefined): Passage {
  const used = tablesIn(query, tables);
  return {
    document_id: used.length === 1 ? used[0].document_id : null,
    filename: `Table: ${used.length ? used.map((t) => t.name).join(", ") : "query result"}`,
    chunk_id: null,
    text: plan ? `${describeAggregate(plan, result.rows)}\n\n${renderResult(query, result)}` : renderResult(query, result),
    score: 1,
    page: null,
    url: null,
  };
}

/** The chart asked for, when it can be drawn from the result, with a note for the model either way. */
function chartOf(input: Record<string, unknown>, result: SqlResult): { chart?: ToolOutput["chart"]; note?: string } {
  const wanted = chartRequest(input);
  if (!wanted) return {};
  const c = buildChart(wanted, result.columns, result.rows);
  return c.ok ? { chart: { spec: c.spec }, note: "The chart was drawn for the user." } : { note: `No chart was drawn: ${c.reason}.` };
}

async function answerQuery(kb: KnowledgeBase, tables: TableInfo[], input: Record<string, unknown>, ctx: ToolCallContext, plan: (q: string) => AggregatePlan | undefined): Promise<ToolOutput> {
  const query = typeof input.query === "string" ? input.query.trim() : "";
  if (!query) return { text: "The query is empty: send one SELECT statement.", isError: true };
  let result: SqlResult;
  try {
    result = await runSql(ctx.scope.env, ctx.scope.db, kb.id, query, { reconcile: false });
  } catch (e) {
    if (e instanceof ApiError) return { text: `The query was refused (${e.code}): ${e.message}`, isError: true };
    throw e;
  }
  const { chart, note } = chartOf(input, result);
  const more = result.truncated ? " (more exist: only the first 1,000 were returned)" : "";
  const notes = [`The query returned ${result.row_count} row${result.row_count === 1 ? "" : "s"}${more}.`, ...(note ? [note] : [])];
  return {
    text: notes.join(" "),
    passages: [resultPassage(query, result, tables, plan(query))],
    data: { sql: query, columns: result.columns, rows: result.rows.slice(0, 20), row_count: result.row_count },
    ...(chart ? { chart } : {}),
  };
}

export function sqlQueryTool(kb: KnowledgeBase, tables: TableInfo[]): Tool {
  // Queries the offline plan built, so their results are phrased for local-extractive.
  const planned = new Map<string, AggregatePlan>();
  return {
    name: "sql__query",
    description: sqlToolDescription(kb, tables),
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 10_000, description: "One read-only SELECT or WITH statement" },
        ...(CHART_INPUT_PROPERTIES as unknown as Record<string, Record<string, unknown>>),
      },
      required: ["query"],
      additionalProperties: false,
    },
    kind: "data",
    origin: { type: "internal" },
    plan(question) {
      const p = planAggregate(question, tables);
      if (!p) return null;
      planned.set(p.sql, p);
      return { query: p.sql };
    },
    execute: (input, ctx) => answerQuery(kb, tables, input, ctx, (q) => planned.get(q)),
  };
}

/** `sql__query` joins the toolbox when the turn's knowledge base has tables. */
export const sqlProvider: ToolProvider = {
  name: "sql",
  async tools(scope) {
    if (!(await hasTabularDocuments(scope.db, scope.kb.id))) return [];
    const tables = await listKbTables(scope.env, scope.db, scope.kb.id);
    return tables.length ? [sqlQueryTool(scope.kb, tables)] : [];
  },
};

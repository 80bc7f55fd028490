import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { planAggregate } from "../../src/services/tables/aggregate";
import { buildChart } from "../../src/services/tables/chart";
import { listKbTables } from "../../src/services/tables/service";
import { sqlProvider, sqlQueryTool } from "../../src/services/tables/tool";
import { getKnowledgeBase } from "../../src/services/knowledge-bases";
import { TOOL_PROVIDERS } from "../../src/capabilities";
import { call, createKb, createOrg, expectStatus } from "../helpers";
import { db } from "../documents/doc-helpers";
import { newChat, readSse, streamMessage } from "../chats/chat-helpers";
import { kbWithCsv, SALES } from "./table-helpers";
import type { TableInfo } from "../../src/services/tables/catalog";

async function kbWithSales(prompt: Record<string, string> = {}) {
  const { org, kb, auth, docId: id } = await kbWithCsv(SALES, "sales.csv", prompt);
  const row = (await getKnowledgeBase(db(), kb.id))!;
  const tables = await listKbTables(env, db(), kb.id);
  return { org, kb, row, auth, docId: id, tables };
}

const ctxFor = (kb: any) => ({ signal: new AbortController().signal, scope: { env, db: db(), kb } as any, emit: () => {}, callId: "c1" });

describe("sql__query tool", () => {
  it("is registered, offered only when the knowledge base has tables, and describes the schema and the prompt fields", async () => {
    expect(TOOL_PROVIDERS).toContain(sqlProvider);
    const prompt = {
      sqlAgentInstructions: "Always filter out test orders.",
      sqlAnsweringInstructions: "Give amounts in euros.",
      sqlCustomPrompt: "Fiscal year starts in July.",
      chartInstructions: "Prefer bar charts.",
    };
    const { row, docId, tables } = await kbWithSales(prompt);
    const [tool] = await sqlProvider.tools({ env, db: db(), kb: row } as any, {} as any);
    expect(tool.name).toBe("sql__query");
    expect(tool.description).toContain("- sales (from \"sales.csv\", 5 rows): region text, order_date text (ISO date), amount real, units integer, rep text");
    for (const v of Object.values(prompt)) expect(tool.description).toContain(v);
    expect(tool.inputSchema.required).toEqual(["query"]);
    expect(tables[0].document_id).toBe(docId);
    const empty = await createKb(await createOrg());
    expect(await sqlProvider.tools({ env, db: db(), kb: (await getKnowledgeBase(db(), empty.id))! } as any, {} as any)).toEqual([]);
  });

  it("execute: a data preview of at most 20 rows, the rows as a citable passage, and a validated chart", async () => {
    const { row, docId, tables } = await kbWithSales();
    const tool = sqlQueryTool(row, tables);
    const out = await tool.execute(
      { query: "SELECT region, ROUND(SUM(amount), 2) AS total FROM sales GROUP BY region ORDER BY total DESC", chart: "bar", x: "region", y: "total", chart_title: "Sales" },
      ctxFor(row),
    );
    expect(out.isError).toBeFalsy();
    expect(out.data).toEqual({
      sql: "SELECT region, ROUND(SUM(amount), 2) AS total FROM sales GROUP BY region ORDER BY total DESC",
      columns: ["region", "total"],
      rows: [["North", 1500.75], ["South", 899.99], ["East", 450]],
      row_count: 3,
    });
    expect(out.passages).toHaveLength(1);
    expect(out.passages![0]).toMatchObject({ document_id: docId, filename: "Table: sales", chunk_id: null });
    expect(out.passages![0].text).toContain("| region | total |\n| --- | --- |\n| North | 1500.75 |");
    expect(out.chart!.spec).toEqual({
      $schema: "https://vega.github.io/schema/vega-lite/v5.json",
      title: "Sales",
      data: { values: [{ region: "North", total: 1500.75 }, { region: "South", total: 899.99 }, { region: "East", total: 450 }] },
      mark: { type: "bar", tooltip: true },
      encoding: { x: { field: "region", type: "nominal", sort: null }, y: { field: "total", type: "quantitative" } },
    });

    // Many rows: the preview keeps 20, the count stays true.
    const tens = "(VALUES (0), (1), (2))";
    const units = "(VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9))";
    const many = await tool.execute({ query: `SELECT a.column1 * 10 + b.column1 AS x FROM ${tens} a, ${units} b` }, ctxFor(row));
    expect(many.data!.rows).toHaveLength(20);
    expect(many.data!.row_count).toBe(30);
    expect(many.passages![0].filename).toBe("Table: query result");

    // A chart that cannot be drawn is explained, the rows still come back.
    const bad = await tool.execute({ query: "SELECT region, rep FROM sales", chart: "line", x: "region", y: "rep" }, ctxFor(row));
    expect(bad.chart).toBeUndefined();
    expect(bad.text).toMatch(/No chart was drawn: y \(rep\) must be a column of numbers/);
    expect(bad.data!.row_count).toBe(5);

    // A refused query is an error result, never a thrown error.
    const refused = await tool.execute({ query: "DELETE FROM sales" }, ctxFor(row));
    expect(refused).toMatchObject({ isError: true, text: expect.stringMatching(/invalid_sql/) });
    expect(await tool.execute({ query: " " }, ctxFor(row))).toMatchObject({ isError: true });
  });

  it("chart validation: marks, columns, numbers, inline data only", () => {
    const cols = ["month", "region", "total"];
    const rows = [["2024-07", "North", 10], ["2024-08", "South", 20]];
    expect(buildChart({ mark: "pie", x: "month", y: "total" }, cols, rows)).toMatchObject({ ok: false, reason: expect.stringMatching(/chart must be one of/) });
    expect(buildChart({ mark: "bar", x: "nope", y: "total" }, cols, rows)).toMatchObject({ ok: false, reason: expect.stringMatching(/x must name a result column/) });
    expect(buildChart({ mark: "bar", x: "month", y: "total" }, cols, [])).toMatchObject({ ok: false });
    const line = buildChart({ mark: "line", x: "month", y: "total", color: "region" }, cols, rows);
    expect(line).toMatchObject({ ok: true, spec: { encoding: { x: { type: "temporal" }, color: { field: "region", type: "nominal" } } } });
    const pie = buildChart({ mark: "arc", x: "region", y: "total" }, cols, rows);
    expect(pie).toMatchObject({ ok: true, spec: { encoding: { theta: { field: "total" }, color: { field: "region" } } } });
    expect(JSON.stringify(pie)).not.toMatch(/"url"/);
  });
});

describe("offline aggregate plan", () => {
  const table = (name: string, columns: Array<[string, "integer" | "real" | "text", string?]>, filename = `${name}.csv`): TableInfo => ({
    name,
    document_id: "doc_1",
    filename,
    part: null,
    columns: columns.map(([n, type, format]) => ({ name: n, type, source: n.replace(/_/g, " "), ...(format ? { format: format as "date" } : {}) })),
    row_count: 5,
    source_row_count: 5,
    truncated: false,
    dropped_columns: 0,
    created_at: "",
  });
  const sales = table("sales", [["region", "text"], ["order_date", "text", "date"], ["amount", "real"], ["units", "integer"], ["rep", "text"]]);
  const staff = table("staff", [["name", "text"], ["salary", "integer"], ["team", "text"]]);

  it("builds the SQL of simple aggregates over the table the question names", () => {
    const sql = (q: string) => planAggregate(q, [sales, staff])?.sql ?? null;
    expect(sql("What are the total sales by region?")).toBe('SELECT "region", ROUND(SUM("amount"), 2) AS total_amount FROM "sales" GROUP BY "region" ORDER BY total_amount DESC LIMIT 50');
    expect(sql("How many sales were there?")).toBe('SELECT COUNT(*) AS count FROM "sales"');
    expect(sql("How many units were sold in sales?")).toBe('SELECT SUM("units") AS total_units FROM "sales"');
    expect(sql("Average units per rep in sales")).toBe('SELECT "rep", ROUND(AVG("units"), 2) AS average_units FROM "sales" GROUP BY "rep" ORDER BY average_units DESC LIMIT 50');
    expect(sql("What is the highest salary?")).toBe('SELECT MAX("salary") AS max_salary FROM "staff"');
    expect(sql("Lowest salary for each team")).toBe('SELECT "team", MIN("salary") AS min_salary FROM "staff" GROUP BY "team" ORDER BY min_salary DESC LIMIT 50');
    expect(sql("What is the earliest order date?")).toBe('SELECT MIN("order_date") AS min_order_date FROM "sales"');
    // Not an aggregate, or no table named: left to search.
    expect(sql("Who is Ada?")).toBeNull();
    expect(sql("What is the total of everything?")).toBeNull();
  });
});

describe("in turns", () => {
  it("a tool-calling model's sql__query emits data_preview and chart events, and the rows are a cited source", async () => {
    const { kb, auth, docId } = await kbWithSales();
    const { chat } = await newChat(auth, kb, { model: "test-gpt" });
    const q = "SELECT region, ROUND(SUM(amount), 2) AS total FROM sales GROUP BY region ORDER BY total DESC";
    const events = await readSse(
      await streamMessage(chat.id, { content: `Sales by region? @call sql__query {"query":"${q}","chart":"bar","x":"region","y":"total"}`, model: "test-gpt", agent_mode: "quick" }, auth),
    );
    const types = events.map((e) => e.data.type);
    const preview = events.find((e) => e.data.type === "data_preview")!.data;
    expect(preview).toEqual({ type: "data_preview", sql: q, columns: ["region", "total"], rows: [["North", 1500.75], ["South", 899.99], ["East", 450]], row_count: 3 });
    const chart = events.find((e) => e.data.type === "chart")!.data;
    expect(chart.spec).toMatchObject({ $schema: "https://vega.github.io/schema/vega-lite/v5.json", mark: { type: "bar" }, data: { values: [{ region: "North", total: 1500.75 }, {}, {}] } });
    expect(types.indexOf("data_preview")).toBeLessThan(types.indexOf("chart"));
    expect(types.indexOf("chart")).toBeLessThan(types.indexOf("sources"));
    const sources = events.find((e) => e.data.type === "sources")!.data.sources;
    const table = sources.find((s: any) => s.filename === "Table: sales");
    expect(table).toMatchObject({ document_id: docId });
    expect(table.text).toContain("| North | 1500.75 |");
    expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    const assistant = msgs.messages.find((m: any) => m.role === "assistant");
    expect(assistant.metadata.tool_calls).toEqual([expect.objectContaining({ tool: "sql__query", is_error: false })]);
    // The model cites the table's rows.
    const cited = [...assistant.content.matchAll(/\[(\d+)\]/g)].map((m: RegExpMatchArray) => Number(m[1]));
    expect(cited).toContain(table.index);
  });

  it("local-extractive answers a simple aggregate question with the number and the SQL it ran", async () => {
    const { kb, auth } = await kbWithSales();
    const { chat } = await newChat(auth, kb);
    const events = await readSse(await streamMessage(chat.id, { content: "What is the total amount by region in the sales table?", model: "local-extractive" }, auth));
    const preview = events.find((e) => e.data.type === "data_preview")?.data;
    expect(preview).toMatchObject({ sql: 'SELECT "region", ROUND(SUM("amount"), 2) AS total_amount FROM "sales" GROUP BY "region" ORDER BY total_amount DESC LIMIT 50', row_count: 3 });
    const final = events.find((e) => e.data.type === "final_response" && e.data.isComplete)!.data.content as string;
    expect(final).toContain("North 1500.75; South 899.99; East 450");
    expect(final).toContain('SELECT "region", ROUND(SUM("amount"), 2)');
    const count = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: "How many rows are in the sales table?", model: "local-extractive" } }), 200);
    expect(count.assistant_message.content).toMatch(/Number of rows in sales\.csv \(table sales\): 5/);
  });
});

import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { runSql } from "../../src/services/tables/service";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker, type Auth } from "../helpers";
import { db, docRow, eventually, uploadFile, waitForDocument } from "../documents/doc-helpers";
import { kbWithCsv, SALES } from "./table-helpers";


const sql = (auth: Auth, kbId: string, query: string) => call(`/knowledge-bases/${kbId}/sql`, { ...auth, body: { query } });

describe("tables from documents", () => {
  it("a processed CSV becomes a typed table, listed and queryable", async () => {
    const { kb, auth, docId } = await kbWithCsv();
    const { tables } = expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200);
    expect(tables).toEqual([
      {
        name: "sales_q3",
        document_id: docId,
        filename: "Sales Q3.csv",
        sheet: null,
        columns: [
          { name: "region", type: "text", source_name: "Region" },
          { name: "order_date", type: "text", format: "date", source_name: "Order Date" },
          { name: "amount", type: "real", source_name: "Amount" },
          { name: "units", type: "integer", source_name: "Units" },
          { name: "rep", type: "text", source_name: "Rep" },
        ],
        row_count: 5,
        truncated: false,
      },
    ]);
    const r = expectStatus(await sql(auth, kb.id, "SELECT region, SUM(units) AS units, ROUND(SUM(amount), 2) AS total FROM sales_q3 GROUP BY region ORDER BY region"), 200);
    expect(r).toEqual({
      columns: ["region", "units", "total"],
      rows: [["East", 5, 450], ["North", 4, 1500.75], ["South", 3, 899.99]],
      row_count: 3,
      truncated: false,
    });
    // Dates compare as ISO text; WITH works; a trailing ';' and comments are fine.
    const w = expectStatus(
      await sql(auth, kb.id, "-- Q3 only\nWITH q3 AS (SELECT * FROM sales_q3 WHERE order_date BETWEEN '2024-07-01' AND '2024-09-30')\nSELECT count(*) AS n FROM q3; -- done"),
      200,
    );
    expect(w.rows).toEqual([[4]]);
  });

  it("an XLSX sheet per table and a JSON array as a table", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth: Auth = { cookie: org.owner.cookie };
    const { simpleXlsx } = await import("../documents/fixtures");
    const x = await uploadFile(auth, kb, { filename: "Team.xlsx", mime: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", body: simpleXlsx() });
    const j = await uploadFile(auth, kb, { filename: "people.json", mime: "application/json", body: JSON.stringify([{ name: "Ada", age: 36 }, { name: "Alan", age: 41 }]) });
    for (const id of [x.id, j.id]) expect((await waitForDocument(auth, id)).status).toBe("processed");
    const { tables } = expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200);
    expect(tables.map((t: any) => [t.name, t.sheet, t.columns.map((c: any) => `${c.name}:${c.type}`), t.row_count])).toEqual([
      ["people", null, ["name:text", "age:integer"], 2],
      ["team_budget_costs", "Budget & Costs", ["item:text", "cost:real"], 1],
      ["team_staff", "Staff", ["name:text", "role:text"], 1],
    ]);
    expect(expectStatus(await sql(auth, kb.id, "SELECT avg(age) FROM people"), 200).rows).toEqual([[38.5]]);
  });

  it("a file named like SQLite's own tables is loaded under a prefixed name and is searchable", async () => {
    const { kb, auth, docId } = await kbWithCsv("sqlite_seq,city\n7,Reykjavik\n9,Tromso\n", "sqlite_master.csv");
    const { tables } = expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200);
    expect(tables.map((t: any) => [t.name, t.columns.map((c: any) => c.name)])).toEqual([["t_sqlite_master", ["c_sqlite_seq", "city"]]]);
    expect(expectStatus(await sql(auth, kb.id, "SELECT city FROM t_sqlite_master WHERE c_sqlite_seq = 9"), 200).rows).toEqual([["Tromso"]]);
    const hits = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "Reykjavik" });
    expect(hits.map((h) => h.document_id)).toContain(docId);
  });

  it("two files with the same name get unique table names; reprocessing keeps the name and replaces the rows", async () => {
    const { kb, auth, docId } = await kbWithCsv("a,b\n1,2\n", "data.csv");
    const second = await uploadFile(auth, kb, { filename: "data.csv", mime: "text/csv", body: "a,b\n5,6\n7,8\n" });
    await waitForDocument(auth, second.id);
    let { tables } = expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200);
    expect(tables.map((t: any) => [t.name, t.document_id, t.row_count])).toEqual([
      ["data", docId, 1],
      ["data_2", second.id, 2],
    ]);
    // The stored file changes (as if uploaded again) and the document is reprocessed.
    const row = await docRow(docId);
    await env.BUCKET.put(row.s3_key, "a,b,c\n10,20,x\n30,40,y\n50,60,z\n");
    expectStatus(await call(`/documents/${docId}/reprocess`, { ...auth, method: "POST" }), 202);
    expect((await waitForDocument(auth, docId)).status).toBe("processed");
    ({ tables } = expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200));
    expect(tables.map((t: any) => [t.name, t.document_id, t.row_count, t.columns.length])).toEqual([
      ["data", docId, 3, 3],
      ["data_2", second.id, 2, 2],
    ]);
    expect(expectStatus(await sql(auth, kb.id, "SELECT sum(a) FROM data"), 200).rows).toEqual([[90]]);
  });

  it("deleting the document removes its tables", async () => {
    const { kb, auth, docId } = await kbWithCsv();
    expectStatus(await call(`/documents/${docId}`, { ...auth, method: "DELETE" }), 204);
    await eventually(async () => (await env.KB_TABLES.get(env.KB_TABLES.idFromName(kb.id)).stats()).tables === 0, "tables dropped");
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200).tables).toEqual([]);
    expectError(await sql(auth, kb.id, "SELECT * FROM sales_q3"), 400, "invalid_sql");
  });

  it("tables of a document deleted behind the store's back are dropped on the next access", async () => {
    const { kb, auth, docId } = await kbWithCsv();
    await env.DB.prepare("UPDATE documents SET status = 'deleted' WHERE id = ?").bind(docId).run();
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200).tables).toEqual([]);
  });

  it("deleting the tenant or the organization empties the stores of their knowledge bases", async () => {
    const org = await createOrg();
    const auth: Auth = { cookie: org.owner.cookie };
    const tenant = await createTenant(org);
    const kbs = [await createKb(org, { tenant_id: tenant.id }), await createKb(org)];
    for (const kb of kbs) {
      const { id } = await uploadFile(auth, kb, { filename: "t.csv", mime: "text/csv", body: "a\n1\n" });
      expect((await waitForDocument(auth, id)).status).toBe("processed");
    }
    const stats = (kbId: string) => env.KB_TABLES.get(env.KB_TABLES.idFromName(kbId)).stats();
    expect((await stats(kbs[0].id)).tables).toBe(1);
    expectStatus(await call(`/tenants/${tenant.id}`, { ...auth, method: "DELETE" }), 204);
    await eventually(async () => (await stats(kbs[0].id)).tables === 0, "tenant's store emptied");
    expect((await stats(kbs[1].id)).tables).toBe(1);
    expectStatus(await call(`/organizations/${org.id}`, { ...auth, method: "DELETE" }), 204);
    await eventually(async () => (await stats(kbs[1].id)).tables === 0, "organization's store emptied");
  });

  it("deleting the knowledge base empties its store", async () => {
    const { kb, auth } = await kbWithCsv();
    expectStatus(await call(`/knowledge-bases/${kb.id}`, { ...auth, method: "DELETE" }), 204);
    await eventually(async () => (await env.KB_TABLES.get(env.KB_TABLES.idFromName(kb.id)).stats()).tables === 0, "store emptied");
  });
});

describe("read-only SQL", () => {
  it("refuses every kind of statement that is not one read-only query, with the reason", async () => {
    const { kb, auth } = await kbWithCsv();
    const refused: Array<[string, RegExp]> = [
      ["DELETE FROM sales_q3", /DELETE statement/],
      ["UPDATE sales_q3 SET amount = 0", /UPDATE statement/],
      ["INSERT INTO sales_q3 (region) VALUES ('x')", /INSERT statement/],
      ["REPLACE INTO sales_q3 (region) VALUES ('x')", /REPLACE statement/],
      ["DROP TABLE sales_q3", /DROP statement/],
      ["CREATE TABLE x (a)", /CREATE statement/],
      ["ALTER TABLE sales_q3 ADD COLUMN z", /ALTER statement/],
      ["CREATE INDEX i ON sales_q3 (region)", /CREATE statement/],
      ["ATTACH DATABASE 'file:x.db' AS x", /ATTACH statement/],
      ["DETACH DATABASE x", /DETACH statement/],
      ["PRAGMA table_info(sales_q3)", /PRAGMA statement/],
      ["VACUUM", /VACUUM statement/],
      ["ANALYZE", /ANALYZE statement/],
      ["BEGIN", /BEGIN statement/],
      ["SELECT 1; DELETE FROM sales_q3", /one statement/],
      ["SELECT 1; SELECT 2", /one statement/],
      ["SELECT 1;/* x */ DROP TABLE sales_q3", /one statement/],
      // Starts like a query, is a write: the database refuses it.
      ["WITH x AS (SELECT 1) DELETE FROM sales_q3", /syntax error/],
      ["WITH x AS (SELECT 1) INSERT INTO sales_q3 (region) SELECT 'x'", /syntax error/],
      // Functions that read files or load extensions, and other gated functions.
      ["SELECT load_extension('/tmp/x.so')", /not authorized|not allowed/],
      ["SELECT readfile('/etc/passwd')", /no such function/],
      ["SELECT writefile('/tmp/x', 'y')", /no such function/],
      ["SELECT sqlite_version()", /not authorized/],
      // Schema and internals.
      ["SELECT * FROM sqlite_master", /schema table/],
      ["SELECT name FROM sqlite_schema", /schema table/],
      ["SELECT * FROM _kb_tables", /internal tables/],
      ["SELECT * FROM pragma_table_info('sales_q3')", /Virtual tables|not authorized/],
      ["SELECT * FROM _cf_KV", /no such table|internal/],
      // Plain errors carry SQLite's reason.
      ["SELECT * FROM nope", /no such table: nope/],
      ["SELECT nope FROM sales_q3", /no such column: nope/],
      ["SELECT 'unterminated", /Unterminated string/],
      ["SELECT 1 /* open", /Unterminated \/\* comment/],
      ["   ", /empty/],
    ];
    for (const [query, reason] of refused) {
      const r = await sql(auth, kb.id, query);
      const e = expectError(r, 400, "invalid_sql");
      expect(e.message, query).toMatch(reason);
    }
    // Nothing changed.
    expect(expectStatus(await sql(auth, kb.id, "SELECT count(*) FROM sales_q3"), 200).rows).toEqual([[5]]);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/tables`, auth), 200).tables).toHaveLength(1);
  });

  it("the database itself refuses writes even past the text check (wrapping, EXPLAIN, a rolled-back run)", async () => {
    const { kb } = await kbWithCsv();
    // Typed loosely: the store's RPC types are too deep for runInDurableObject's generics (TS2589).
    const store = env.KB_TABLES.get(env.KB_TABLES.idFromName(kb.id));
    const inside: any = runInDurableObject;
    await inside(store, async (instance: any) => {
      const opts = { maxRows: 10, timeoutMs: 5000 };
      // Layer 1: as the subquery of `SELECT * FROM (...)`, only one SELECT/WITH/VALUES statement parses.
      for (const body of ["SELECT 1; DELETE FROM sales_q3", "DELETE FROM sales_q3", "PRAGMA writable_schema = 1", "ATTACH 'x' AS y"]) {
        expect(instance.compileCheck(`SELECT * FROM (\n${body}\n) LIMIT 11`), body).toMatch(/syntax error/);
      }
      // Layer 2: compiled programs that write or touch the schema are refused by their opcodes.
      for (const body of ["DELETE FROM sales_q3", "UPDATE sales_q3 SET amount = 0", "INSERT INTO sales_q3 (region) VALUES ('x')", "CREATE TABLE z (a)", "DROP TABLE sales_q3"]) {
        expect(instance.compileCheck(body), body).toMatch(/would change the database/);
      }
      expect(instance.compileCheck("SELECT region, count(*) FROM sales_q3 GROUP BY region ORDER BY 2")).toBeNull();
      // Layer 3: a statement that writes is rolled back and refused.
      expect(instance.runRolledBack("DELETE FROM sales_q3", opts)).toMatchObject({ ok: false, code: "invalid_sql", message: expect.stringMatching(/rolled back/) });
      expect(instance.runRolledBack("SELECT count(*) FROM sales_q3", opts)).toMatchObject({ ok: true, rows: [[5]] });
    });
    expect(await store.query("SELECT count(*) AS n FROM sales_q3", { maxRows: 10, timeoutMs: 5000 })).toMatchObject({ ok: true, rows: [[5]] });
  });

  it("limits: more than 1,000 rows are cut with truncated; more than 10,000 characters are refused", async () => {
    const big = ["n,sq", ...Array.from({ length: 1500 }, (_, i) => `${i},${i * i}`)].join("\n");
    const { kb, auth } = await kbWithCsv(big, "squares.csv");
    const r = expectStatus(await sql(auth, kb.id, "SELECT n FROM squares ORDER BY n"), 200);
    expect(r.row_count).toBe(1000);
    expect(r.rows).toHaveLength(1000);
    expect(r.truncated).toBe(true);
    expect(r.rows[999]).toEqual([999]);
    const exact = expectStatus(await sql(auth, kb.id, "SELECT n FROM squares LIMIT 1000"), 200);
    expect([exact.row_count, exact.truncated]).toEqual([1000, false]);
    // A recursive query is refused before it runs (how long it runs cannot be known), even one that would stop.
    const rec = await sql(auth, kb.id, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c");
    expect(expectError(rec, 400, "invalid_sql").message).toMatch(/Recursive queries/);
    // A join that would go through 1,500^3 combinations is refused before it runs.
    const cross = await sql(auth, kb.id, "SELECT count(*) FROM squares a, squares b, squares c WHERE a.sq + b.sq = c.n * 3");
    expect(expectError(cross, 400, "invalid_sql").message).toMatch(/3\.4e\+9 row combinations/);
    expect(expectStatus(await sql(auth, kb.id, "SELECT count(*) FROM squares a JOIN squares b ON a.n = b.n"), 200).rows).toEqual([[1500]]);
    const long = `SELECT n FROM squares WHERE n IN (${Array.from({ length: 3000 }, (_, i) => i).join(",")})`;
    expect(long.length).toBeGreaterThan(10_000);
    expect(expectError(await sql(auth, kb.id, long), 400, "invalid_sql").message).toMatch(/at most 10000/);
    const justUnder = `SELECT count(*) FROM squares WHERE n IN (${Array.from({ length: 2000 }, (_, i) => i).join(",")})`.padEnd(10_000, " ");
    expect(expectStatus(await sql(auth, kb.id, justUnder), 200).rows).toEqual([[1500]]);
  });

  it("past the time limit the answer is query_timeout", async () => {
    const { kb } = await kbWithCsv(["n", ...Array.from({ length: 3000 }, (_, i) => String(i))].join("\n"), "numbers.csv");
    // Within the bound (9 million combinations) but longer than these limits.
    const slow = "SELECT count(*) FROM numbers a, numbers b WHERE (a.n * 7 + b.n) % 1000003 = 5";
    await expect(runSql(env, db(), kb.id, slow, { timeoutMs: 5 })).rejects.toMatchObject({ code: "query_timeout" });
    // A row stream that outlasts the limit inside the store is stopped there too.
    const store = env.KB_TABLES.get(env.KB_TABLES.idFromName(kb.id));
    const stream = "SELECT a.n, b.n FROM numbers a, numbers b WHERE (a.n + b.n) % 97 = 0";
    expect(await store.query(stream, { maxRows: 1000, timeoutMs: 1 })).toMatchObject({ ok: false, code: "query_timeout" });
  });

  it("a knowledge base never sees another's tables; the routes go through authorization", async () => {
    const a = await kbWithCsv(SALES, "sales.csv");
    const b = await kbWithCsv("region,amount\nWest,1\n", "sales.csv");
    expect(expectStatus(await sql(a.auth, a.kb.id, "SELECT count(*) FROM sales"), 200).rows).toEqual([[5]]);
    expect(expectStatus(await sql(b.auth, b.kb.id, "SELECT count(*) FROM sales"), 200).rows).toEqual([[1]]);
    // Another organization's member: 404 (existence not revealed).
    expectError(await sql(b.auth, a.kb.id, "SELECT 1"), 404, "not_found");
    expectError(await call(`/knowledge-bases/${a.kb.id}/tables`, b.auth), 404, "not_found");
    // Keys: documents:read is needed; a key restricted to another knowledge base does not reach this one.
    const reader = await createKey(a.org, { scopes: ["documents:read"] });
    expect(expectStatus(await sql({ key: reader.key }, a.kb.id, "SELECT count(*) FROM sales"), 200).rows).toEqual([[5]]);
    const noScope = await createKey(a.org, { scopes: ["query:rag"] });
    expectError(await sql({ key: noScope.key }, a.kb.id, "SELECT 1"), 403);
    expectError(await call(`/knowledge-bases/${a.kb.id}/tables`, { key: noScope.key }), 403);
    const otherKb = await createKb(a.org);
    const pinned = await createKey(a.org, { scopes: ["documents:read"], knowledge_base_id: otherKb.id });
    expect([403, 404]).toContain((await sql({ key: pinned.key }, a.kb.id, "SELECT 1")).status);
    const otherOrgKey = await createKey(b.org, { scopes: ["documents:read"] });
    expectError(await sql({ key: otherOrgKey.key }, a.kb.id, "SELECT 1"), 404);
    expectError(await sql({}, a.kb.id, "SELECT 1"), 401);
    // A viewer reads: listing and querying are reads.
    const viewer = await addMember(a.org, "viewer");
    expect(expectStatus(await sql({ cookie: viewer.cookie }, a.kb.id, "SELECT count(*) FROM sales"), 200).rows).toEqual([[5]]);
    expect(expectStatus(await call(`/knowledge-bases/${a.kb.id}/tables`, { cookie: viewer.cookie }), 200).tables).toHaveLength(1);
  });

  it("malformed bodies are 400 invalid_request; both routes are documented", async () => {
    const { kb, auth } = await kbWithCsv();
    for (const body of [{}, { query: 5 }, { query: "" }, []]) {
      expectError(await call(`/knowledge-bases/${kb.id}/sql`, { ...auth, body }), 400, "invalid_request");
    }
    const doc: any = await (await fetchWorker("/openapi.json")).json();
    expect(doc.paths["/api/v1/knowledge-bases/{id}/tables"].get.operationId).toBe("listKnowledgeBaseTables");
    expect(doc.paths["/api/v1/knowledge-bases/{id}/sql"].post["x-permission"]).toBe("documents:read");
  });
});

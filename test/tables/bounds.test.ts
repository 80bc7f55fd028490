import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runSql } from "../../src/services/tables/service";
import { call, expectError, expectStatus, type Auth } from "../helpers";
import { db } from "../documents/doc-helpers";
import { kbWithCsv } from "./table-helpers";

/**
 * Bounded SQL (issue 24, API-DECISIONS "Bounded work"): SQLite in a Durable
 * Object cannot be interrupted, so what cannot finish in time is refused
 * before it runs (400 invalid_sql, saying why), a statement past the limit
 * answers query_timeout, and the store answers the next query at once.
 */

const ROWS = 20_000;
const CSV = ["n,word,g", ...Array.from({ length: ROWS }, (_, i) => `${i},w${i},${i % 10}`)].join("\n");
const sql = (auth: Auth, kbId: string, query: string) => call(`/knowledge-bases/${kbId}/sql`, { ...auth, body: { query } });

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await f();
  return { value, ms: Date.now() - started };
}

describe("SQL that cannot be bounded", () => {
  it("is refused at once with the reason, and the store answers the next query", async () => {
    const { kb, auth } = await kbWithCsv(CSV, "t.csv");
    const pathological: Array<[string, RegExp]> = [
      ["WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", /Recursive queries \(WITH RECURSIVE\) are not allowed/],
      ["WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c", /Recursive queries/],
      // The plan estimate used to count a subquery as one row: a cross join of LIMIT subqueries ran for tens of seconds.
      ["SELECT count(*) FROM (SELECT * FROM t LIMIT 20000) a, (SELECT * FROM t LIMIT 20000) b, (SELECT * FROM t LIMIT 20000) c", /about 8\.0e\+12 row combinations/],
      ["SELECT count(*) FROM (SELECT * FROM t LIMIT 20000) a, (SELECT * FROM t LIMIT 20000) b", /row combinations/],
      ["WITH a AS MATERIALIZED (SELECT * FROM t) SELECT count(*) FROM a x, a y WHERE x.n + y.n = 7", /row combinations/],
      ["SELECT (SELECT count(*) FROM t b WHERE b.n < a.n) FROM t a", /row combinations/],
      ["SELECT count(*) FROM t a JOIN t b ON a.g = b.g", /row combinations/],
      // Expressions that build large values on every row.
      ["SELECT count(*) FROM (SELECT group_concat(word) OVER (ORDER BY n ROWS BETWEEN 10000 PRECEDING AND 10000 FOLLOWING) AS x FROM t) WHERE length(x) > 5", /group_concat cannot be used as a window function/],
      [`SELECT count(*) FROM t WHERE length(replace(replace(replace(word, 'w', '${"w".repeat(60)}'), 'w', '${"w".repeat(60)}'), 'w', '${"w".repeat(60)}')) > 1`, /build values of up to/],
      ["SELECT count(*) FROM t WHERE length(printf('%.*c', n * 200, 'x')) > 0", /build values of up to 4096 KB/],
      ["SELECT count(*) FROM t WHERE length(zeroblob(n * 200)) > 0", /The function zeroblob is not allowed/],
      ["SELECT sum(value) FROM json_each((SELECT json_group_array(n) FROM t))", /Virtual tables|not authorized/],
    ];
    for (const [query, reason] of pathological) {
      const { value: r, ms } = await timed(() => sql(auth, kb.id, query));
      expect(expectError(r, 400, "invalid_sql").message, query).toMatch(reason);
      expect(ms, query).toBeLessThan(3_000);
      const next = await timed(() => sql(auth, kb.id, "SELECT count(*) FROM t"));
      expect(expectStatus(next.value, 200).rows, query).toEqual([[ROWS]]);
      expect(next.ms, query).toBeLessThan(3_000);
    }
  });

  it("a CTE named like a table is bounded as what it is, not as the table", async () => {
    const { kb, auth } = await kbWithCsv(["n", ...Array.from({ length: 100 }, (_, i) => String(i))].join("\n"), "small.csv");
    // The CTE `small` has 10,000 rows; the aliases x and y are given to it, not to the 100-row table.
    const hundred = `(VALUES ${Array.from({ length: 100 }, (_, i) => `(${i})`).join(", ")})`;
    const cte = `WITH small AS MATERIALIZED (SELECT a.column1 AS n FROM ${hundred} a, ${hundred} b)`;
    const r = await sql(auth, kb.id, `${cte} SELECT count(*) FROM small x, small y`);
    expect(expectError(r, 400, "invalid_sql").message).toMatch(/about 1\.0e\+8 row combinations/);
    expect(expectStatus(await sql(auth, kb.id, `${cte} SELECT count(*) FROM small x`), 200).rows).toEqual([[10_000]]);
  });

  it("bounded queries over the same data run: key joins, groups, windows, short expressions", async () => {
    const { kb, auth } = await kbWithCsv(CSV, "t.csv");
    const ok = async (query: string) => expectStatus(await sql(auth, kb.id, query), 200).rows;
    expect(await ok("SELECT count(*) FROM t a JOIN t b ON a.n = b.n")).toEqual([[ROWS]]);
    expect(await ok("SELECT count(*) FROM t a JOIN t b ON b.n = a.n + 1 WHERE a.g = 3")).toEqual([[ROWS / 10]]);
    expect(await ok("SELECT g, count(*), min(word) FROM t GROUP BY g ORDER BY g LIMIT 2")).toEqual([[0, ROWS / 10, "w0"], [1, ROWS / 10, "w1"]]);
    expect(await ok("SELECT n, sum(n) OVER (PARTITION BY g ORDER BY n) FROM t WHERE g = 1 ORDER BY n LIMIT 2")).toEqual([[1, 1], [11, 12]]);
    expect(await ok("SELECT printf('%05d-%s', n, upper(replace(word, 'w', 'word '))) FROM t WHERE n = 42")).toEqual([["00042-WORD 42"]]);
    expect(await ok("SELECT g, length(group_concat(word, ',')) > 0 FROM t GROUP BY g ORDER BY g LIMIT 1")).toEqual([[0, 1]]);
    expect(await ok("SELECT count(*) FROM t WHERE n IN (SELECT n FROM t WHERE g = 2) AND word LIKE 'w1%'")).toEqual([[1111]]);
    // A cross join small enough to be bounded (20,000 x 3 rows).
    expect(await ok("SELECT count(*) FROM t, (VALUES (1), (2), (3)) v WHERE g = v.column1")).toEqual([[(ROWS / 10) * 3]]);
  });

  it("a statement past the time limit answers query_timeout, and the store answers the next one well within 6 s", async () => {
    const { kb, auth } = await kbWithCsv(CSV.split("\n").slice(0, 3001).join("\n"), "t.csv");
    // 9 million combinations: within the bound, longer than this limit.
    const slow = "SELECT count(*) FROM t a, t b WHERE (a.n * 7 + b.n) % 1000003 = 5";
    const first = await timed(() => runSql(env, db(), kb.id, slow, { timeoutMs: 50 }).catch((e) => e));
    expect(first.value).toMatchObject({ code: "query_timeout", status: 400 });
    expect(first.ms).toBeLessThan(3_000);
    const next = await timed(() => sql(auth, kb.id, "SELECT count(*) FROM t"));
    expect(expectStatus(next.value, 200).rows).toEqual([[3000]]);
    expect(first.ms + next.ms).toBeLessThan(6_000);
  });
});

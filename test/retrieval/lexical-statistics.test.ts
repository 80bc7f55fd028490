import { env } from "cloudflare:workers";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { beforeEach, describe, expect, it } from "vitest";
import { batchSql } from "../../src/db/batch";
import { openDb } from "../../src/db/client";
import { lexicalPlan, lexicalSearch, queryTerms } from "../../src/services/retrieval/lexical";
import {
  COMMON_SHARE,
  forgetStatistics,
  keptStatistics,
  LARGE_KB,
  matchedTerms,
  MIN_MATCH_TERMS,
  searchStatistics,
  STATS_TTL_MS,
  termsKeptInIsolate,
  toCount,
} from "../../src/services/retrieval/lexical-statistics";
import { createKb, createOrg } from "../helpers";

/**
 * A large knowledge base's lexical statistics are kept in the isolate and its commonest words leave the
 * candidates' MATCH (lexical-statistics.ts); a small one is counted exactly on every search.
 */
const dialect = new SQLiteAsyncDialect();
const matchOf = (plan: ReturnType<typeof lexicalPlan>) => String(dialect.sqlToQuery(plan.statements[0]).params.find((p) => String(p).includes("knowledge_base_id :")));

/** A knowledge base of `n` passages written straight to D1: every one says "acme", one in 40 "zebra<k>", one in 30 "yak<k>". */
async function kbOfPassages(n: number) {
  const org = await createOrg();
  const kb = await createKb(org);
  const now = new Date().toISOString();
  const doc = `doc_${crypto.randomUUID().replace(/-/g, "")}`;
  await env.DB.prepare(
    `INSERT INTO documents (id, organization_id, environment_id, tenant_id, knowledge_base_id, filename, mime_type, size_bytes, status, s3_key, ingest_seq, index_generation, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'big.md', 'text/markdown', 1, 'processed', ?, 1, 1, ?, ?)`,
  ).bind(doc, org.id, org.envId, org.tenantId, kb.id, `test/${doc}`, now, now).run();
  for (let start = 0; start < n; start += 500) {
    const rows = Array.from({ length: Math.min(500, n - start) }, (_, k) => {
      const i = start + k;
      return { id: `${doc}:1:${i}`, ordinal: i, body: `Acme passage number ${i} about zebra${i % 40} and yak${i % 30}.` };
    });
    await env.DB.prepare(
      `INSERT INTO chunks (id, document_id, knowledge_base_id, tenant_id, generation, ordinal, title, heading, body, token_count, embedded, created_at)
       SELECT json_extract(value,'$.id'), ?, ?, ?, 1, json_extract(value,'$.ordinal'), 'big.md', '', json_extract(value,'$.body'), 10, 0, ?
       FROM json_each(?)`,
    ).bind(doc, kb.id, org.tenantId, now, JSON.stringify(rows)).run();
  }
  return kb;
}

describe("a knowledge base's lexical statistics", () => {
  beforeEach(() => forgetStatistics());

  it("a small knowledge base is counted on every search, and matches every query term", async () => {
    const kb = await kbOfPassages(300);
    const db = openDb(env);
    for (let i = 0; i < 2; i++) {
      const plan = lexicalPlan(kb.id, "acme zebra7 yak17");
      expect(plan.statements).toHaveLength(2); // the candidates, and every count
      expect(dialect.sqlToQuery(plan.statements[1]).sql).toContain("AS total");
      expect(matchOf(plan)).toContain('"acme"');
      plan.rank(await batchSql(db, plan.statements));
    }
    expect(keptStatistics(kb.id)).toBeNull();
  });

  it("a large one is counted once, then only for terms it has not seen, and its commonest words leave the MATCH", async () => {
    const kb = await kbOfPassages(LARGE_KB + 100);
    const db = openDb(env);
    const first = lexicalPlan(kb.id, "acme zebra7 yak17");
    expect(first.statements).toHaveLength(2);
    expect(matchOf(first)).toContain('"acme"'); // nothing known yet
    const counted = first.rank(await batchSql(db, first.statements));
    expect(keptStatistics(kb.id)).toMatchObject({ total: LARGE_KB + 100 });
    expect(keptStatistics(kb.id)!.df.get(queryTerms("acme")[0].stem)?.n).toBe(LARGE_KB + 100);

    const again = lexicalPlan(kb.id, "acme zebra7 yak17");
    expect(again.statements).toHaveLength(1); // nothing left to count
    expect(matchOf(again)).not.toContain('"acme"');
    expect(matchOf(again)).toContain('"zebra7"');
    const kept = again.rank(await batchSql(db, again.statements));
    // The passages with both rare words (i ≡ 47 mod 120) lead either way, scored with the same counts.
    const withBoth = Array.from({ length: LARGE_KB + 100 }, (_, i) => i).filter((i) => i % 120 === 47).length;
    const both = (h: { row: { body: string } }) => /\bzebra7\b/.test(h.row.body) && /\byak17\b/.test(h.row.body);
    const top = (hits: typeof counted) => hits.slice(0, withBoth).map((h) => h.row.id).sort();
    expect(counted.slice(0, withBoth).every(both)).toBe(true);
    expect(kept.slice(0, withBoth).every(both)).toBe(true);
    expect(top(kept)).toEqual(top(counted));
    expect(kept.length).toBeLessThan(counted.length); // fewer candidates: the passages that say only "acme" are not scored

    // A new term is counted alone (no total); the kept ones are not counted again.
    const newTerm = lexicalPlan(kb.id, "zebra7 number");
    expect(newTerm.statements).toHaveLength(2);
    const countSql = dialect.sqlToQuery(newTerm.statements[1]);
    expect(countSql.sql).not.toContain("AS total");
    expect(countSql.params.filter((p) => String(p).includes('"number"'))).toHaveLength(1);
    expect(countSql.params.some((p) => String(p).includes('"zebra7"'))).toBe(false);
    newTerm.rank(await batchSql(db, newTerm.statements));
    expect(keptStatistics(kb.id)!.df.get(queryTerms("number")[0].stem)?.n).toBe(LARGE_KB + 100);
  });

  it("counts older than a minute are counted again, and meanwhile still choose the MATCH; common words only keep the rarest", async () => {
    const kb = await kbOfPassages(LARGE_KB);
    const db = openDb(env);
    const first = lexicalPlan(kb.id, "acme zebra7 yak17");
    first.rank(await batchSql(db, first.statements));
    const kept = keptStatistics(kb.id)!;
    kept.totalAt -= STATS_TTL_MS + 1;
    for (const d of kept.df.values()) d.at -= STATS_TTL_MS + 1;
    const stale = lexicalPlan(kb.id, "acme zebra7 yak17");
    expect(stale.statements).toHaveLength(2);
    const countSql = dialect.sqlToQuery(stale.statements[1]);
    expect(countSql.sql).toContain("AS total");
    for (const w of ["acme", "zebra7", "yak17"]) expect(countSql.params.some((p) => String(p).includes(`"${w}"`))).toBe(true);
    expect(matchOf(stale)).not.toContain('"acme"'); // the old counts still leave the common word out
    stale.rank(await batchSql(db, stale.statements));
    expect(lexicalPlan(kb.id, "acme zebra7 yak17").statements).toHaveLength(1); // fresh again
    // Only common words: the two rarest stay in the MATCH, and the search still answers.
    const common = lexicalPlan(kb.id, "acme passage number");
    common.rank(await batchSql(db, common.statements));
    const again = lexicalPlan(kb.id, "acme passage number");
    expect(matchOf(again).match(/"\w+"/g)?.length).toBe(MIN_MATCH_TERMS + 1); // the knowledge base's phrase and two words
    expect((await lexicalSearch(db, kb.id, "acme passage number")).length).toBeGreaterThan(0);
  });
});

describe("the terms the candidates' query matches", () => {
  const terms = ["a", "b", "c", "d"].map((stem) => ({ stem }));
  const known = (df: Record<string, number>, total = 10_000) => ({ total, totalAt: Date.now(), df: new Map(Object.entries(df).map(([s, n]) => [s, { n, at: Date.now() }])) });

  it("leaves out terms above the common share in a large knowledge base only, and keeps the rarest when all are common", () => {
    const share = (s: number) => Math.round(s * 10_000);
    expect(matchedTerms(terms, null)).toEqual(terms);
    expect(matchedTerms(terms, known({ a: share(0.9) }, LARGE_KB - 1))).toEqual(terms);
    expect(matchedTerms(terms, known({ a: share(0.9), b: share(COMMON_SHARE), c: share(0.01) })).map((t) => t.stem)).toEqual(["b", "c", "d"]);
    const allCommon = known({ a: share(0.9), b: share(0.5), c: share(0.3), d: share(0.7) });
    expect(matchedTerms(terms, allCommon).map((t) => t.stem)).toEqual(["c", "b"].slice(0, MIN_MATCH_TERMS));
    expect(matchedTerms([{ stem: "a" }], allCommon).map((t) => t.stem)).toEqual(["a"]);
  });

  it("searchStatistics keeps a large knowledge base's counts, merged, and forgets a small one's", () => {
    const id = `kb_${crypto.randomUUID()}`;
    expect(searchStatistics(id, null, { total: 10, df: new Map([["a", 1]]) }, ["a"])).toEqual({ total: 10, df: new Map([["a", 1]]) });
    expect(keptStatistics(id)).toBeNull();
    searchStatistics(id, null, { total: LARGE_KB, df: new Map([["a", 5]]) }, ["a"]);
    const k = keptStatistics(id)!;
    expect(toCount(k, [{ stem: "a" }, { stem: "b" }])).toEqual({ total: false, terms: [{ stem: "b" }] });
    expect(toCount(k, [{ stem: "a" }], Date.now() + STATS_TTL_MS + 1)).toEqual({ total: true, terms: [{ stem: "a" }] });
    expect(searchStatistics(id, k, { df: new Map([["b", 7]]) }, ["a", "b"])).toEqual({ total: LARGE_KB, df: new Map([["a", 5], ["b", 7]]) });
    expect([...keptStatistics(id)!.df].map(([s, d]) => [s, d.n])).toEqual([["a", 5], ["b", 7]]);
  });

  it("the isolate keeps a bounded number of terms: the knowledge bases counted longest ago go first", () => {
    forgetStatistics();
    const stems = (n: number, prefix: string) => new Map(Array.from({ length: n }, (_, i): [string, number] => [`${prefix}${i}`, 1]));
    const ids = Array.from({ length: 8 }, (_, i) => `kb_budget_${i}`);
    for (const id of ids) searchStatistics(id, null, { total: LARGE_KB, df: stems(20_000, id) }, []); // 10,000 kept per knowledge base
    expect(keptStatistics(ids[7])!.df.size).toBe(10_000);
    expect(termsKeptInIsolate()).toBe(50_000);
    expect(ids.map((id) => keptStatistics(id) !== null)).toEqual([false, false, false, true, true, true, true, true]);
    // Counting more for a kept one moves it to the back of the line.
    searchStatistics(ids[3], keptStatistics(ids[3]), { df: new Map([["extra", 1]]) }, []);
    expect(keptStatistics(ids[3])!.df.size).toBe(10_000); // full: nothing added
    searchStatistics("kb_budget_new", null, { total: LARGE_KB, df: stems(10, "n") }, []);
    expect(keptStatistics(ids[4])).toBeNull();
    expect(keptStatistics(ids[3])).not.toBeNull();
    expect(termsKeptInIsolate()).toBe(40_010);
  });
});

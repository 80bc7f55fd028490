import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";
import { call, createKb, createKey, createOrg, expectError, expectStatus, type Auth, type TestOrg } from "../helpers";

/**
 * The raw query endpoints over HTTP: grouping, chunk_count bounds, hostile
 * query strings, isolation between knowledge bases, deleted and reprocessed
 * documents, and a small fixed relevance test of the fused retrieval.
 */
const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i % 7}`).join(" ");

const OWLS = `# Owls

## Hunting
Owls hunt at night. Their silent flight and sharp hearing let them catch mice and voles in complete darkness; a barn owl
can locate a mouse under snow by sound alone. ${words(60, "nocturnal")}

## Nesting
Owls nest in tree cavities, barns and old buildings. The female lays between two and seven eggs and incubates them while
the male brings food. ${words(60, "cavity")}
`;
const PENGUINS = `# Emperor penguins

Emperor penguins huddle together to survive the Antarctic winter. The male keeps the single egg warm on his feet for
about two months without eating, while the female feeds at sea.
`;
const GLACIERS = `# Glaciers

Glaciers carve U-shaped valleys as they move. Meltwater from glaciers feeds rivers in summer, and moraines mark how far
the ice once reached.
`;
const PHARMA = `# Pharmacokinetics of acetaminophen

Acetaminophen is absorbed rapidly from the gut; its half-life in healthy adults is about two hours. Pharmacokinetics
describes how a drug is absorbed, distributed, metabolised and excreted.
`;

let org: TestOrg;
let auth: Auth;
let kb: { id: string; tenant_id: string };
const docs: Record<string, string> = {};

async function upload(o: { auth: Auth; kb: { id: string; tenant_id: string } }, filename: string, body: string) {
  const { id } = await uploadFile(o.auth, o.kb, { filename, mime: "text/markdown", body });
  expect((await waitForDocument(o.auth, id)).status).toBe("processed");
  return id;
}

const rawQuery = (body: Record<string, unknown>, a: Auth = auth, path = "/chats/fast-raw-query") => call(path, { ...a, body });

beforeAll(async () => {
  org = await createOrg();
  auth = { cookie: org.owner.cookie };
  kb = await createKb(org);
  for (const [name, text] of Object.entries({ owls: OWLS, penguins: PENGUINS, glaciers: GLACIERS, pharma: PHARMA })) {
    docs[name] = await upload({ auth, kb }, `${name}.md`, text);
  }
});

describe("POST /chats/fast-raw-query and /chats/raw-query", () => {
  it("groups chunks by document, best document first, each chunk once", async () => {
    const r = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "owls hunting mice at night and nesting eggs", chunk_count: 10 }), 200);
    expect(r.query).toBe("owls hunting mice at night and nesting eggs");
    expect(r.results[0].document_id).toBe(docs.owls);
    expect(r.results[0].filename).toBe("owls.md");
    // Both sections of the owls document, in one group, best chunk first.
    const owl = r.results[0].chunks;
    expect(owl.length).toBe(2);
    expect(owl[0].score).toBeGreaterThanOrEqual(owl[1].score);
    const ids = r.results.flatMap((g: any) => g.chunks.map((c: any) => c.chunk_id));
    expect(new Set(ids).size).toBe(ids.length);
    const groups = r.results.map((g: any) => g.document_id);
    expect(new Set(groups).size).toBe(groups.length);
    const best = r.results.map((g: any) => Math.max(...g.chunks.map((c: any) => c.score)));
    expect([...best].sort((a, b) => b - a)).toEqual(best);
    for (const g of r.results) for (const c of g.chunks) expect(Object.keys(c).sort()).toEqual(["chunk_id", "page", "score", "text"]);
  });

  it("raw-query is an alias of fast-raw-query, and `query` of `content`", async () => {
    const body = { knowledge_base_id: kb.id, content: "emperor penguins egg", chunk_count: 5 };
    const a = expectStatus(await rawQuery(body), 200);
    const b = expectStatus(await rawQuery(body, auth, "/chats/raw-query"), 200);
    const c = expectStatus(await rawQuery({ knowledge_base_id: kb.id, query: "emperor penguins egg", chunk_count: 5 }), 200);
    expect(b).toEqual(a);
    expect(c.results).toEqual(a.results);
    expect(a.results[0].document_id).toBe(docs.penguins);
  });

  it("returns at most chunk_count chunks (default 10) and refuses counts outside 1..50", async () => {
    const one = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "owls penguins glaciers acetaminophen", chunk_count: 1 }), 200);
    expect(one.results.flatMap((g: any) => g.chunks)).toHaveLength(1);
    const all = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "owls penguins glaciers acetaminophen", chunk_count: 50 }), 200);
    expect(all.results.flatMap((g: any) => g.chunks)).toHaveLength(5); // every chunk of the knowledge base
    const def = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "owls penguins glaciers acetaminophen" }), 200);
    expect(def.results.flatMap((g: any) => g.chunks).length).toBeLessThanOrEqual(10);
    for (const bad of [0, 51, 2.5, "5", -1, null]) {
      const e = expectError(await rawQuery({ knowledge_base_id: kb.id, content: "owls", chunk_count: bad }), 400, "invalid_request");
      expect(e.details?.some((d) => d.path === "body.chunk_count")).toBe(true);
    }
  });

  it("refuses a missing or empty query and a missing knowledge base id", async () => {
    expectError(await rawQuery({ knowledge_base_id: kb.id }), 400, "invalid_request");
    expectError(await rawQuery({ knowledge_base_id: kb.id, content: "" }), 400, "invalid_request");
    expectError(await rawQuery({ content: "owls" }), 400, "invalid_request");
    expectError(await rawQuery({ knowledge_base_id: kb.id, content: "x".repeat(32_001) }), 400, "invalid_request");
  });

  it("never lets a query string act as FTS5 syntax", async () => {
    const hostile = [
      '"',
      '""""',
      'owls"',
      "NEAR(owls mice, 2)",
      "owls NEAR/3 mice",
      "owl*",
      "*",
      "-owls",
      "owls -mice",
      "(owls OR",
      "owls AND NOT penguins",
      "title:owls",
      "knowledge_base_id:kb_other OR owls",
      "{heading body}: owls",
      "^owls",
      "+owls +mice",
      "owls:*:",
      "'; DROP TABLE chunks; --",
      "\u0000owls\u0001",
      "🦉🐧",
      "🦉 owls",
      "the of and",
      "?!.,;",
      "owls ".repeat(2000),
      "a".repeat(10_000),
      Array.from({ length: 1500 }, (_, i) => `w${i}`).join(" "),
    ];
    for (const content of hostile) {
      const r = await rawQuery({ knowledge_base_id: kb.id, content, chunk_count: 5 });
      expect(r.status, `${JSON.stringify(content.slice(0, 40))}: ${JSON.stringify(r.body).slice(0, 200)}`).toBe(200);
      expect(Array.isArray(r.body.results)).toBe(true);
    }
    // The words still count: quoting keeps them as plain terms.
    const near = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "NEAR(owls mice, 2)", chunk_count: 3 }), 200);
    expect(near.results[0].document_id).toBe(docs.owls);
    const emoji = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "🦉 owls", chunk_count: 3 }), 200);
    expect(emoji.results[0].document_id).toBe(docs.owls);
    const repeated = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "owls ".repeat(2000), chunk_count: 3 }), 200);
    expect(repeated.results[0].document_id).toBe(docs.owls);
  });
});

describe("retrieval relevance (a small fixed set; fails if either leg drops out of the fusion)", () => {
  it("ranks the document that answers first, from both legs", async () => {
    const cases: Array<[string, string]> = [
      ["Which birds hunt mice at night by sound?", "owls"],
      ["How do emperor penguins keep their egg warm in winter?", "penguins"],
      ["What shape of valley do glaciers carve?", "glaciers"],
      ["half-life of acetaminophen", "pharma"],
    ];
    for (const [content, expected] of cases) {
      const r = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content, chunk_count: 3 }), 200);
      expect(r.results[0]?.document_id, content).toBe(docs[expected]);
    }
  });

  it("finds a misspelled query through the vector leg alone (no word matches)", async () => {
    const r = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "pharmakokinetiks acetaminofen", chunk_count: 3 }), 200);
    expect(r.results[0]?.document_id).toBe(docs.pharma);
  });

  it("fuses both legs: a passage found by both scores more than by either", async () => {
    const { searchKnowledgeBase } = await import("../../src/services/retrieval/search");
    const { createDb } = await import("../../src/db/client");
    const db = createDb(env.DB);
    const query = "emperor penguins huddle in the Antarctic winter";
    const fused = await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, query, limit: 3 });
    const lexical = await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, query, limit: 3, vector: false });
    const vector = await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, query, limit: 3, fts: false });
    expect(fused[0].document_id).toBe(docs.penguins);
    expect(fused[0].scores.fts).toBeGreaterThan(0);
    expect(fused[0].scores.vector).toBeGreaterThan(0);
    expect(fused[0].score).toBeGreaterThan(lexical[0].score);
    expect(lexical[0].document_id).toBe(docs.penguins);
    expect(lexical[0].scores.vector).toBeNull();
    expect(vector[0].document_id).toBe(docs.penguins);
    expect(vector[0].scores.fts).toBeNull();
  });
});

describe("isolation, deleted and reprocessed documents", () => {
  it("never returns another knowledge base's passages, in the same organization or another", async () => {
    const sameOrgKb = await createKb(org);
    const sameOrgDoc = await upload({ auth, kb: sameOrgKb }, "penguins-copy.md", PENGUINS.replace("Emperor", "Emperor sameorgsecret"));
    const other = await createOrg();
    const otherAuth = { cookie: other.owner.cookie };
    const otherKb = await createKb(other);
    const otherDoc = await upload({ auth: otherAuth, kb: otherKb }, "penguins.md", PENGUINS.replace("Emperor", "Emperor otherorgsecret"));

    for (const content of ["emperor penguins", "sameorgsecret", "otherorgsecret penguins"]) {
      const r = expectStatus(await rawQuery({ knowledge_base_id: kb.id, content, chunk_count: 50 }), 200);
      const ids = r.results.map((g: any) => g.document_id);
      expect(ids).not.toContain(sameOrgDoc);
      expect(ids).not.toContain(otherDoc);
      expect(ids.every((id: string) => Object.values(docs).includes(id))).toBe(true);
      expect(JSON.stringify(r.results)).not.toMatch(/sameorgsecret|otherorgsecret/);
    }
    // The other organization's knowledge base: 404; a key restricted to one knowledge base: 403 on another.
    expectError(await rawQuery({ knowledge_base_id: otherKb.id, content: "penguins" }), 404, "not_found");
    const { key } = await createKey(org, { scopes: ["query:rag"], knowledge_base_id: kb.id });
    expectStatus(await rawQuery({ knowledge_base_id: kb.id, content: "penguins" }, { key }), 200);
    expectError(await rawQuery({ knowledge_base_id: sameOrgKb.id, content: "penguins" }, { key }), 403, "forbidden");
    const { key: noQuery } = await createKey(org, { scopes: ["documents:read"] });
    expectError(await rawQuery({ knowledge_base_id: kb.id, content: "penguins" }, { key: noQuery }), 403, "forbidden");
    expectError(await call("/chats/fast-raw-query", { body: { knowledge_base_id: kb.id, content: "penguins" } }), 401, "unauthorized");
  });

  it("drops a deleted document at once", async () => {
    const ownKb = await createKb(org);
    const keep = await upload({ auth, kb: ownKb }, "glaciers.md", GLACIERS);
    const gone = await upload({ auth, kb: ownKb }, "glaciers-2.md", GLACIERS.replace("Glaciers carve", "Glaciers also carve"));
    const before = expectStatus(await rawQuery({ knowledge_base_id: ownKb.id, content: "glaciers carve valleys" }), 200);
    expect(before.results.map((g: any) => g.document_id).sort()).toEqual([keep, gone].sort());
    expect((await call(`/documents/${gone}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const after = expectStatus(await rawQuery({ knowledge_base_id: ownKb.id, content: "glaciers carve valleys" }), 200);
    expect(after.results.map((g: any) => g.document_id)).toEqual([keep]);
  });

  it("answers from exactly one generation of a document being reprocessed", async () => {
    const ownKb = await createKb(org);
    const id = await upload({ auth, kb: ownKb }, "owls.md", OWLS);
    const chunkIds = async () => {
      const r = expectStatus(await rawQuery({ knowledge_base_id: ownKb.id, content: "owls hunting nesting eggs mice", chunk_count: 50 }), 200);
      expect(r.results).toHaveLength(1);
      return r.results[0].chunks.map((c: any) => c.chunk_id as string).sort();
    };
    const first = await chunkIds();
    expect(first).toHaveLength(2);

    // An attempt in progress: the next generation's chunks are written but not yet switched to.
    const row = await env.DB.prepare("SELECT ingest_seq, index_generation FROM documents WHERE id = ?").bind(id).first<{ ingest_seq: number; index_generation: number }>();
    const next = row!.index_generation + 1;
    await env.DB.prepare(
      `INSERT INTO chunks (id, document_id, knowledge_base_id, tenant_id, generation, ordinal, title, heading, body, token_count, created_at)
       SELECT ? || ':' || ? || ':' || ordinal, document_id, knowledge_base_id, tenant_id, ?, ordinal, title, heading, body, token_count, created_at
       FROM chunks WHERE document_id = ? AND generation = ?`,
    )
      .bind(id, next, next, id, row!.index_generation)
      .run();
    expect(await chunkIds()).toEqual(first);

    // A real reprocess: while queued the old generation answers; once processed, only the new one.
    await env.DB.prepare("DELETE FROM chunks WHERE document_id = ? AND generation = ?").bind(id, next).run();
    expectStatus(await call(`/documents/${id}/reprocess`, { ...auth, method: "POST" }), 202);
    const during = await chunkIds();
    expect(during.length).toBe(2);
    expect((await waitForDocument(auth, id)).status).toBe("processed");
    const after = await chunkIds();
    expect(after).toHaveLength(2);
    expect(after).not.toEqual(first);
  });
});

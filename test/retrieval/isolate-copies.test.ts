import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CAPABILITIES } from "../../src/capabilities";
import type { Caller } from "../../src/contracts/caller";
import { jobContext, type ServiceContext } from "../../src/contracts/context";
import { createDb, openDb } from "../../src/db/client";
import { withSimulatedDistance } from "../../src/db/distance";
import { rememberPlacement, turnSearchAhead } from "../../src/services/chats/search-ahead";
import { hashEmbed } from "../../src/services/embeddings/hash";
import { getKnowledgeBase } from "../../src/services/knowledge-bases";
import { turnPassage } from "../../src/services/retrieval/retriever";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { vectorIndexFor } from "../../src/services/vector-index";
import { clearCopies, COPY_MAX_BYTES } from "../../src/services/vector-index/isolate-copies";
import { call } from "../helpers";
import { kbWithDocument } from "../chats/chat-helpers";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";

/**
 * Issue 28 (README "Latency"): a small knowledge base's vectors copied into the isolate that searches it
 * (src/services/vector-index/isolate-copies.ts), used only at the index version they were copied at, and a
 * turn's search riding in its read when its statements are ready at once (src/db/rider.ts).
 */
afterEach(() => {
  vi.restoreAllMocks();
  clearCopies();
});

const QUESTION = "How many days do customers have to request a refund?";
const dims = 512;
const unit = (text: string) => hashEmbed(text, dims);

describe("a small knowledge base's vectors copied into the isolate", () => {
  it("answers a query at the version it was copied at exactly as the index's object does, and never at another", async () => {
    const { kb } = await kbWithDocument();
    const row = (await getKnowledgeBase(openDb(env), kb.id))!;
    const index = vectorIndexFor(env);
    const q = unit(QUESTION);
    expect(index.queryCopy!(kb.id, q, 100, row.indexVersion)).toBeNull();
    const fromObject = await index.query(kb.id, q, 100); // no version: the object, and no copy kept
    expect(index.queryCopy!(kb.id, q, 100, row.indexVersion)).toBeNull();
    expect(fromObject.length).toBeGreaterThan(0);
    expect(await index.query(kb.id, q, 100, row.indexVersion)).toEqual(fromObject); // the object, which hands the copy over
    expect(index.queryCopy!(kb.id, q, 100, row.indexVersion)).toEqual(fromObject);
    expect(index.queryCopy!(kb.id, q, 3, row.indexVersion)).toEqual(fromObject.slice(0, 3));
    expect(index.queryCopy!(kb.id, q, 100, row.indexVersion + 1)).toBeNull();
    // A later version's copy replaces it; an earlier one never replaces a later.
    expect(await index.query(kb.id, q, 100, row.indexVersion + 1)).toEqual(fromObject);
    expect(index.queryCopy!(kb.id, q, 100, row.indexVersion)).toBeNull();
    expect(await index.query(kb.id, q, 100, row.indexVersion)).toEqual(fromObject);
    expect(index.queryCopy!(kb.id, q, 100, row.indexVersion + 1)).toEqual(fromObject);
    expect(index.queryCopy!(kb.id, q, 100, row.indexVersion)).toBeNull();
  });

  it("raises the version when a document enters search or leaves it, so a copy taken before is not used", async () => {
    const { kb, auth } = await kbWithDocument();
    const db = openDb(env);
    const before = (await getKnowledgeBase(db, kb.id))!;
    const first = await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, knowledgeBase: before, query: "Where do visitors park?" });
    expect(vectorIndexFor(env).queryCopy!(kb.id, unit("x"), 1, before.indexVersion)).not.toBeNull(); // copied by that search
    expect(first.some((p) => /blue garage/.test(p.text))).toBe(false);

    const { id } = await uploadFile(auth, kb, { filename: "parking.md", mime: "text/markdown", body: "# Parking\n\nVisitors park in the blue garage on Harbour Street, level minus two.\n" });
    expect((await waitForDocument(auth, id)).status).toBe("processed");
    const after = (await getKnowledgeBase(db, kb.id))!;
    expect(after.indexVersion).toBeGreaterThan(before.indexVersion);
    // The new document's passage is found by the vector leg too: its vector is in the copy this search takes.
    const found = await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, knowledgeBase: after, query: "Where do visitors park?" });
    const parking = found.find((p) => p.document_id === id)!;
    expect(parking.scores.vector).not.toBeNull();
    const again = await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, knowledgeBase: after, query: "Where do visitors park?" });
    expect(again).toEqual(found); // from the copy now

    expect((await call(`/documents/${id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const deleted = (await getKnowledgeBase(db, kb.id))!;
    expect(deleted.indexVersion).toBeGreaterThan(after.indexVersion);
    const gone = await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, knowledgeBase: deleted, query: "Where do visitors park?" });
    expect(gone.some((p) => p.document_id === id)).toBe(false);
  });

  it("is kept only for a knowledge base that small: a larger one is searched in its object every time", async () => {
    const kbId = `kb_${crypto.randomUUID()}`;
    const index = vectorIndexFor(env);
    const rows = Math.floor(COPY_MAX_BYTES / (4 * dims)) + 1;
    const records = Array.from({ length: rows }, (_, i) => ({ id: `c${i}`, documentId: "d", values: unit(`passage number ${i}`) }));
    await index.upsert(kbId, records);
    const q = unit("passage number 7");
    const matches = await index.query(kbId, q, 5, 0);
    expect(matches[0].id).toBe("c7");
    expect(index.queryCopy!(kbId, q, 5, 0)).toBeNull();
    await index.deleteByIds(kbId, ["c0"]); // now exactly at the limit
    expect(await index.query(kbId, q, 5, 1)).toEqual(matches);
    expect(index.queryCopy!(kbId, q, 5, 1)).toEqual(matches);
  });
});

describe("a turn's search riding in its read", () => {
  const keyCaller = (id: string) => ({ type: "api_key", key: { id }, scopes: new Set(), isAdmin: false, organizationStatus: "active" }) as unknown as Caller;
  function traced(): { ctx: ServiceContext; trips: () => string[] } {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const job = jobContext(env, { capabilities: CAPABILITIES, waitUntil: () => {} });
    const db = createDb(withSimulatedDistance(env.DB, undefined, "1"));
    const ctx = { db, env: job.env, config: job.config, capabilities: job.capabilities, waitUntil: job.waitUntil, requestId: null, caller: keyCaller(`key_${crypto.randomUUID()}`) };
    const trips = () => log.mock.calls.map((c) => String(c[0])).filter((l) => l.startsWith("[hop] d1 ")).map((l) => l.split(" @ ")[0]);
    return { ctx, trips };
  }
  const read = (ctx: ServiceContext) => ctx.db.batch([ctx.db.select({ n: sql<number>`1` }).from(sql`(SELECT 1)`), ctx.db.select({ n: sql<number>`2` }).from(sql`(SELECT 1)`)]);

  it("goes in the read's batch once the vectors are copied here, and finds what the search alone finds", async () => {
    const { kb } = await kbWithDocument();
    const row = (await getKnowledgeBase(openDb(env), kb.id))!;
    const direct = (await searchKnowledgeBase(env, openDb(env), { knowledgeBaseId: kb.id, knowledgeBase: row, query: QUESTION, limit: 4 })).map(turnPassage);
    expect(direct.length).toBeGreaterThan(0);
    const chatId = crypto.randomUUID();
    const { ctx, trips } = traced();
    rememberPlacement(ctx.caller, { chatId }, row);
    const ahead = turnSearchAhead(ctx, { chatId }, { content: QUESTION, agent_mode: "quick" }, true)!;
    expect(await read(ctx)).toEqual([[{ n: 1 }], [{ n: 2 }]]);
    expect(await ahead.passages).toHaveLength(direct.length);
    expect((await ahead.passages).map((p) => p.chunk_id)).toEqual(direct.map((p) => p.chunk_id));
    expect(trips()).toHaveLength(1);
    expect(trips()[0]).toMatch(/^\[hop\] d1 batch of [3-9]$/);

    // Not ready at once (no copy at the version the caller was placed at): its own batch, after its matches.
    rememberPlacement(ctx.caller, { chatId }, { ...row, indexVersion: row.indexVersion + 1 });
    const later = turnSearchAhead(ctx, { chatId }, { content: QUESTION, agent_mode: "quick" }, true)!;
    await read(ctx);
    expect((await later.passages).map((p) => p.chunk_id)).toEqual(direct.map((p) => p.chunk_id));
    expect(trips()).toHaveLength(3);
    expect(trips()[1]).toBe("[hop] d1 batch of 2");
  });

  it("does not break the read when its statements fail: the read is sent again without them, and the search fails", async () => {
    const { kb } = await kbWithDocument();
    const row = (await getKnowledgeBase(openDb(env), kb.id))!;
    await searchKnowledgeBase(env, openDb(env), { knowledgeBaseId: kb.id, knowledgeBase: row, query: QUESTION }); // copied here
    const chatId = crypto.randomUUID();
    const { ctx, trips } = traced();
    rememberPlacement(ctx.caller, { chatId }, row);
    // The knowledge base's full-text table is gone: the search's statements fail in the read's batch.
    await env.DB.prepare("ALTER TABLE chunks_fts RENAME TO chunks_fts_away").run();
    try {
      const ahead = turnSearchAhead(ctx, { chatId }, { content: QUESTION, agent_mode: "quick" }, true)!;
      expect(await read(ctx)).toEqual([[{ n: 1 }], [{ n: 2 }]]);
      await expect(ahead.passages).rejects.toThrow(/chunks_fts/);
      expect(trips()).toHaveLength(2);
      expect(trips()[1]).toBe("[hop] d1 batch of 2");
    } finally {
      await env.DB.prepare("ALTER TABLE chunks_fts_away RENAME TO chunks_fts").run();
    }
  });
});

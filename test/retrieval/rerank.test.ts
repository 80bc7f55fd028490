import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import type { Env } from "../../src/env";
import { httpReranker, normalizeResults, rerankerFor, workersAiReranker, WORKERS_AI_RERANK_MODEL } from "../../src/services/retrieval/rerank";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";
import { createKb, createOrg, testServer, unique } from "../helpers";

const candidates = [
  { text: "Glaciers carve valleys." },
  { text: "Owls hunt mice at night.", heading: "Owls > Hunting", filename: "owls.md" },
  { text: "Penguins huddle in winter." },
];

const lastRequest = async (model: string) => (await fetch(`${testServer("rerank")}/last?model=${model}`)).json() as Promise<any>;

describe("http reranker (Cohere/Jina/TEI-style /rerank)", () => {
  it("sends query, documents and top_n with the key, and orders by relevance", async () => {
    const model = unique("cohere-");
    const r = httpReranker({ url: `${testServer("rerank")}/rerank`, apiKey: "rk-secret", model, timeoutMs: 2000 });
    const results = await r.rerank("which owls hunt mice", candidates);
    expect(results?.[0]).toEqual({ index: 1, score: 0.75 });
    expect(results?.map((x) => x.index)).toEqual([1, 0, 2]);
    const last = await lastRequest(model);
    expect(last.authorization).toBe("Bearer rk-secret");
    expect(last.body).toEqual({
      model,
      query: "which owls hunt mice",
      documents: ["Glaciers carve valleys.", "owls.md > Owls > Hunting\nOwls hunt mice at night.", "Penguins huddle in winter."],
      top_n: 3,
    });
  });

  it("reads TEI's bare array too", async () => {
    const r = httpReranker({ url: `${testServer("rerank")}/rerank`, model: unique("tei-"), timeoutMs: 2000 });
    expect((await r.rerank("penguins in winter", candidates))?.[0].index).toBe(2);
  });

  it("gives up (null, logged) on errors, malformed answers and timeouts", async () => {
    const url = `${testServer("rerank")}/rerank`;
    expect(await httpReranker({ url, model: unique("fail-"), timeoutMs: 2000 }).rerank("q", candidates)).toBeNull();
    expect(await httpReranker({ url, model: unique("garbage-"), timeoutMs: 2000 }).rerank("q", candidates)).toBeNull();
    const started = Date.now();
    expect(await httpReranker({ url, model: unique("slow-"), timeoutMs: 300 }).rerank("q", candidates)).toBeNull();
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it("normalizes provider answers", () => {
    expect(normalizeResults([{ index: 1, relevance_score: 0.2 }, { index: 0, relevance_score: 0.9 }], 2)).toEqual([
      { index: 0, score: 0.9 },
      { index: 1, score: 0.2 },
    ]);
    expect(normalizeResults([{ id: 0, score: 1 }], 1)).toEqual([{ index: 0, score: 1 }]);
    expect(normalizeResults([{ index: 0, score: 1 }, { index: 0, score: 0.5 }], 2)).toBeNull();
    expect(normalizeResults([{ index: 5, score: 1 }], 2)).toBeNull();
    expect(normalizeResults([{ index: 0, score: "x" }], 1)).toBeNull();
    expect(normalizeResults({ results: [] }, 1)).toBeNull();
  });
});

describe("workers-ai reranker (binding test double)", () => {
  it("calls bge-reranker-base with {query, contexts, top_k} and maps {response: [{id, score}]}", async () => {
    const calls: Array<{ model: string; input: any }> = [];
    const ai = {
      async run(model: string, input: any) {
        calls.push({ model, input });
        if (typeof input.query !== "string" || !Array.isArray(input.contexts)) throw new Error("bad input");
        return { response: input.contexts.map((c: { text: string }, id: number) => ({ id, score: c.text.includes("Penguins") ? 0.9 : 0.1 })) };
      },
    } as unknown as Ai;
    const results = await workersAiReranker(ai, WORKERS_AI_RERANK_MODEL, 2000).rerank("penguins", candidates);
    expect(results?.[0]).toEqual({ index: 2, score: 0.9 });
    expect(calls[0].model).toBe("@cf/baai/bge-reranker-base");
    expect(calls[0].input).toMatchObject({ query: "penguins", top_k: 3 });
    expect(calls[0].input.contexts[1]).toEqual({ text: "owls.md > Owls > Hunting\nOwls hunt mice at night." });
    const failing = { run: async () => ({ result: "nope" }) } as unknown as Ai;
    expect(await workersAiReranker(failing, WORKERS_AI_RERANK_MODEL, 2000).rerank("q", candidates)).toBeNull();
  });

  it("is chosen by RERANK_PROVIDER; off by default and when misconfigured", () => {
    expect(rerankerFor(env)).toBeNull();
    expect(rerankerFor({ ...env, RERANK_PROVIDER: "off" })).toBeNull();
    expect(rerankerFor({ ...env, RERANK_PROVIDER: "http" })).toBeNull();
    expect(rerankerFor({ ...env, RERANK_PROVIDER: "workers-ai" })).toBeNull();
    expect(rerankerFor({ ...env, RERANK_PROVIDER: "http", RERANK_URL: "http://x/rerank", RERANK_MODEL: "m" })).toMatchObject({ provider: "http", model: "m" });
    expect(rerankerFor({ ...env, RERANK_PROVIDER: "workers-ai", AI: {} as Ai })).toMatchObject({ provider: "workers-ai", model: WORKERS_AI_RERANK_MODEL });
  });
});

describe("the reranking stage of search", () => {
  let kbId: string;
  beforeAll(async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    kbId = kb.id;
    const files: Record<string, string> = {
      "a.md": "# Bird notes\n\nOwls are birds. Owls owls owls are often seen in barns and forests across the country.",
      "b.md": "# Night hunting\n\nOwls hunt mice at night using their hearing, which tells them exactly where the mice are.",
    };
    for (const [filename, body] of Object.entries(files)) {
      const { id } = await uploadFile(auth, kb, { filename, mime: "text/markdown", body });
      expect((await waitForDocument(auth, id)).status).toBe("processed");
    }
  });

  const search = (extra: Partial<Env>, opts: { rerank?: boolean } = {}) =>
    searchKnowledgeBase({ ...env, ...extra }, createDb(env.DB), { knowledgeBaseId: kbId, query: "how do owls hunt mice at night", limit: 5, stages: opts });

  it("reorders the fused passages by the reranker's scores, and keeps them when it fails", async () => {
    const url = `${testServer("rerank")}/rerank`;
    const plain = await search({});
    expect(plain.length).toBeGreaterThan(1);
    expect(plain.every((p) => p.scores.rerank === undefined)).toBe(true);
    const reversed = await search({ RERANK_PROVIDER: "http", RERANK_URL: url, RERANK_MODEL: unique("reverse-") });
    expect(reversed.map((p) => p.chunk_id)).toEqual(plain.map((p) => p.chunk_id).reverse());
    expect(reversed[0].scores.rerank).toBeGreaterThan(reversed[1].scores.rerank!);
    // The fused score stays the fused score; the reranker's is reported beside it.
    expect(reversed[0].score).toBe(plain[plain.length - 1].score);
    const byWords = await search({ RERANK_PROVIDER: "http", RERANK_URL: url, RERANK_MODEL: unique("cohere-") });
    expect(byWords[0].filename).toBe("b.md");
    const failed = await search({ RERANK_PROVIDER: "http", RERANK_URL: url, RERANK_MODEL: unique("fail-") });
    expect(failed.map((p) => p.chunk_id)).toEqual(plain.map((p) => p.chunk_id));
    const off = await search({ RERANK_PROVIDER: "http", RERANK_URL: url, RERANK_MODEL: unique("reverse-") }, { rerank: false });
    expect(off.map((p) => p.chunk_id)).toEqual(plain.map((p) => p.chunk_id));
  });
});

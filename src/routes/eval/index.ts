import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { config, isProduction } from "../../lib/config";
import { badRequest, notFound } from "../../lib/errors";
import { createRouter, zodDetails } from "../../lib/router";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { searchKnowledgeBase } from "../../services/retrieval/search";

const EvalBody = z.object({
  knowledge_base_id: z.string().min(1).max(128),
  query: z.string().min(1).max(20_000),
  limit: z.number().int().min(1).max(200).default(100),
  lexical: z.boolean().default(true),
  vector: z.boolean().default(true),
  /** Lexical ablations (all on by default): per-knowledge-base BM25 rescoring, query expansion, character n-grams. */
  rescore: z.boolean().optional(),
  expansion: z.boolean().optional(),
  ngrams: z.boolean().optional(),
  rerank: z.boolean().optional(),
  depth: z.number().int().min(10).max(500).optional(),
  rrf_k: z.number().min(1).max(1000).optional(),
  vector_weight: z.number().min(0).max(100).optional(),
});

/**
 * `POST /api/v1/eval/search`: the retrieval function the query endpoints use,
 * deeper (up to 100 passages) and with its stages switchable, for the
 * evaluation harness (`npm run eval:retrieval`). It exists only when
 * EVAL_ENDPOINTS=true, never in production, and is not part of the public API
 * (absent from /openapi.json). Same authorization as the query endpoints.
 */
export const evalRoutes = createRouter().post("/eval/search", async (c) => {
  if (!config(c.env).evalEndpoints || isProduction(c.env)) throw notFound("Route");
  const parsed = EvalBody.safeParse(await c.req.json().catch(() => null));
  if (!parsed.success) throw badRequest("Invalid evaluation request", zodDetails(parsed.error, "json"));
  const body = parsed.data;
  const kb = await knowledgeBaseFor(ctxOf(c), body.knowledge_base_id, "query:rag", { addressedBy: "param" });
  const started = Date.now();
  const timings: Record<string, number> = {};
  const passages = await searchKnowledgeBase(c.env, c.get("db"), {
    knowledgeBaseId: kb.id,
    query: body.query,
    limit: body.limit,
    fts: body.lexical,
    vector: body.vector,
    stages: { rescore: body.rescore, expansion: body.expansion, ngrams: body.ngrams, rerank: body.rerank, depth: body.depth },
    fusion: { rrfK: body.rrf_k, vectorWeight: body.vector_weight },
    timings,
  });
  return c.json({
    took_ms: Date.now() - started,
    timings,
    passages: passages.map((p) => ({ document_id: p.document_id, chunk_id: p.chunk_id, score: p.score, scores: p.scores })),
  });
});

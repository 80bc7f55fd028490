import type { Caller } from "../../contracts/caller";
import type { ServiceContext } from "../../contracts/context";
import type { Passage } from "../../contracts/turn";
import type { KnowledgeBase } from "../../db/schema";
import { terms } from "../../lib/text";
import { actorOf } from "../billing/metering";
import { meterEmbedding } from "../embeddings/metering";
import { QUICK_PASSAGES } from "../answer/stages/plan";
import { turnPassage } from "../retrieval/retriever";
import { searchKnowledgeBase } from "../retrieval/search";

/**
 * A quick turn's knowledge-base search, started alongside the turn's first read (README "Latency"). The search
 * needs the chat's knowledge base, which that read returns: waiting for it would put the search's own round trip
 * after it. So the knowledge base a caller last reached a chat's turns through is remembered in the isolate, and
 * the next quick turn of the same caller on the same chat searches it at once, in parallel with the read.
 *
 * Nothing is trusted: the result is used only when the read then authorizes the turn and shows the same knowledge
 * base with the same search inputs (its embedding model, its tenant), and the query is the one the answer
 * pipeline would search (src/services/answer/stages/plan.ts compares it again). Otherwise it is dropped and the
 * pipeline searches as before. A paid query embedding is charged only once the turn is authorized. The search
 * reads live data in the request's own D1 session, so it sees every write the read would.
 */

const REMEMBERED = 2_000;
const TTL_MS = 10 * 60_000;
/** caller + chat → the knowledge base (insertion-ordered: the oldest is dropped first). */
const placements = new Map<string, { kb: KnowledgeBase; at: number }>();

const keyOf = (caller: Caller, chatId: string) =>
  `${caller.type === "user" ? `user:${caller.user.id}` : `key:${caller.key.id}:${caller.embed?.subject ?? ""}`}|${chatId.toLowerCase()}`;

/** After a caller was authorized for a chat's turns (or created it): its knowledge base, for their next turn. */
export function rememberPlacement(caller: Caller, chatId: string, kb: KnowledgeBase): void {
  const key = keyOf(caller, chatId);
  placements.delete(key);
  placements.set(key, { kb, at: Date.now() });
  if (placements.size > REMEMBERED) placements.delete(placements.keys().next().value!);
}

export interface SearchAhead {
  kb: KnowledgeBase;
  query: string;
  limit: number;
  passages: Promise<Passage[]>;
  embedding: { model: string; tokens: number };
}

/** Starts the search of a quick turn whose chat's knowledge base this caller reached before; null otherwise. */
export function searchAhead(ctx: ServiceContext, chatId: string, turn: { content: string; agent_mode: string }): SearchAhead | null {
  if (turn.agent_mode !== "quick") return null;
  const known = placements.get(keyOf(ctx.caller, chatId));
  if (!known || Date.now() - known.at > TTL_MS) return null;
  const ahead: SearchAhead = { kb: known.kb, query: turn.content, limit: QUICK_PASSAGES, passages: Promise.resolve([]), embedding: { model: "", tokens: 0 } };
  ahead.passages = searchKnowledgeBase(ctx.env, ctx.db, {
    knowledgeBaseId: known.kb.id,
    knowledgeBase: known.kb,
    query: ahead.query,
    limit: ahead.limit,
    onEmbeddingUsage: (u) => (ahead.embedding = u),
  }).then((found) => found.map(turnPassage));
  ahead.passages.catch(() => {}); // dropped unless the turn is authorized
  return ahead;
}

/**
 * The search's result for the turn command, once the turn's read authorized it (`kb` is the knowledge base as read
 * now, `transcript` where the chat ends): undefined when it cannot stand for the pipeline's own search.
 */
export async function searchAheadResult(
  ctx: ServiceContext,
  ahead: SearchAhead | null,
  kb: KnowledgeBase,
  transcript: { count: number },
): Promise<{ query: string; limit: number; passages: Passage[] } | undefined> {
  if (!ahead) return undefined;
  // A short follow-up is searched with the previous question: the ahead search used the message alone.
  const alone = terms(ahead.query).length >= 3 || transcript.count === 0;
  const same = ahead.kb.id === kb.id && ahead.kb.embeddingModel === kb.embeddingModel && ahead.kb.embeddingDimensions === kb.embeddingDimensions;
  let passages: Passage[];
  try {
    passages = await ahead.passages;
  } catch {
    return undefined; // the pipeline searches again, and reports what fails
  } finally {
    // The query embedding was paid for this authorized turn, used or not (recorded off the turn's path).
    const { model, tokens } = ahead.embedding;
    if (tokens > 0) ctx.waitUntil(meterEmbedding(ctx.db, ctx.env, { organizationId: kb.organizationId, tenantId: kb.tenantId, model, tokens, actor: actorOf(ctx.caller) }));
  }
  return alone && same ? { query: ahead.query, limit: ahead.limit, passages } : undefined;
}

import type { Caller } from "../../contracts/caller";
import type { ServiceContext } from "../../contracts/context";
import type { Passage } from "../../contracts/turn";
import type { SearchedAhead as SearchedAheadResult } from "../../contracts/chat-session";
import type { KnowledgeBase } from "../../db/schema";
import { terms } from "../../lib/text";
import { actorOf } from "../billing/metering";
import { meterEmbedding } from "../embeddings/metering";
import { decompose } from "../answer/plan";
import { DEEP_PASSAGES_PER_PART, QUICK_PASSAGES } from "../answer/stages/plan";
import { turnPassage } from "../retrieval/retriever";
import { searchKnowledgeBase } from "../retrieval/search";
import { rawBatchItem } from "../../db/batch";
import { rideAlongOptionally } from "../../db/rider";
import type { SQL } from "drizzle-orm";

/**
 * A search started alongside the read that authorizes it (README "Latency"). Searching needs the knowledge base's
 * row, which that read returns: waiting for it would put the search's own round trip after it. So the knowledge
 * base a caller last reached through a chat's turns, or by its id (fast-raw-query, the MCP `search` tool), is
 * remembered in the isolate, and the caller's next search there starts at once, in parallel with the read.
 *
 * Nothing is trusted: the result is used only when the read then authorizes the request and shows the same
 * knowledge base with the same search inputs (its embedding model and dimensions); for a turn, only when the
 * query and the number of passages are the ones the answer pipeline would search (src/services/answer/stages/plan.ts compares it again).
 * Otherwise it is dropped and the search runs as before. A paid query embedding is charged only once the request
 * is authorized. The search reads live data in the request's own D1 session, so it sees every write the read would.
 */

const REMEMBERED = 2_000;
const TTL_MS = 10 * 60_000;
/**
 * caller + chat or knowledge base → the knowledge base, and the subject the chat's turns act for (insertion-ordered:
 * the oldest is dropped first).
 */
const placements = new Map<string, Placement>();
interface Placement {
  kb: KnowledgeBase;
  /** The end user the chat's turns act for (src/services/chats/turns.ts turnSubject): their memory is read ahead. */
  subject?: string;
  at: number;
}

/** Where a caller searches: through a chat's turns, or a knowledge base named by id. */
export type Reach = { chatId: string } | { knowledgeBaseId: string };

const keyOf = (caller: Caller, reach: Reach) =>
  (caller.type === "user" ? `user:${caller.user.id}` : `key:${caller.key.id}:${caller.embed?.subject ?? ""}`) +
  ("chatId" in reach ? `|chat:${reach.chatId.toLowerCase()}` : `|kb:${reach.knowledgeBaseId}`);

/** After a caller was authorized to search there: the knowledge base (and a chat turn's subject), for their next turn. */
export function rememberPlacement(caller: Caller, reach: Reach, kb: KnowledgeBase, subject?: string): void {
  const key = keyOf(caller, reach);
  placements.delete(key);
  placements.set(key, { kb, subject, at: Date.now() });
  if (placements.size > REMEMBERED) placements.delete(placements.keys().next().value!);
}

/** Where this caller was authorized there last (within TTL_MS), or null. */
export function rememberedPlacement(caller: Caller, reach: Reach): Placement | null {
  const known = placements.get(keyOf(caller, reach));
  return known && Date.now() - known.at <= TTL_MS ? known : null;
}

/**
 * Runs `authorized` (the read that authorizes the request): a refusal forgets what the caller reached there, so
 * a revoked key or a lost membership starts no further search ahead (and pays for no further query embedding).
 */
export async function refusalForgets<T>(caller: Caller, reach: Reach, authorized: Promise<T>): Promise<T> {
  try {
    return await authorized;
  } catch (e) {
    placements.delete(keyOf(caller, reach));
    throw e;
  }
}

export interface SearchAhead {
  kb: KnowledgeBase;
  query: string;
  limit: number;
  passages: Promise<Passage[]>;
  embedding: { model: string; tokens: number };
}

/**
 * Searches ahead running in this isolate, and how many may: in a burst, work started early competes with the other
 * requests' first reads (for the isolate's CPU and the database's queue) and delays their first events, so beyond
 * these the search waits for its read as before (measured: README "Latency", bench:stream).
 *
 * A search keeps its request alive until it ends (`waitUntil`): a request refused before its search was done
 * would otherwise end first, and the runtime drops what that request left pending, its search's end included,
 * so its place would never be given back. A place is held for AHEAD_SLOT_MS at most, whatever happens.
 */
const inFlight = new Map<object, number>();
export const MAX_AHEAD_IN_FLIGHT = 2;
const AHEAD_SLOT_MS = 15_000;

function takeSlot(): (() => void) | null {
  const now = Date.now();
  for (const [slot, at] of inFlight) if (now - at > AHEAD_SLOT_MS) inFlight.delete(slot);
  if (inFlight.size >= MAX_AHEAD_IN_FLIGHT) return null;
  const slot = {};
  inFlight.set(slot, now);
  return () => inFlight.delete(slot);
}

/** Starts the search when this caller reached the knowledge base there before (and the isolate is not in a burst); null otherwise. */
export function searchAhead(ctx: ServiceContext, reach: Reach, query: string, limit: number, ride = false): SearchAhead | null {
  const known = rememberedPlacement(ctx.caller, reach);
  const release = known ? takeSlot() : null;
  if (!known || !release) return null;
  const ahead = startSearch(ctx, known.kb, query, limit, ride);
  const ended = ahead.passages.then(release, release);
  ctx.waitUntil(ended);
  return ahead;
}

/**
 * `ride`: the search's statements may ride in the request's next batch (src/db/rider.ts) when they are ready at
 * once (the offline embedder and this isolate's copy of the knowledge base's vectors); a turn's search is
 * started just before the turn's read, which then carries it: one D1 call for both.
 */
function startSearch(ctx: ServiceContext, kb: KnowledgeBase, query: string, limit: number, ride = false): SearchAhead {
  const ahead: SearchAhead = { kb, query, limit, passages: Promise.resolve([]), embedding: { model: "", tokens: 0 } };
  const db = ctx.db;
  const send = ride ? (statements: SQL[]) => rideAlongOptionally(db, statements.map((s) => rawBatchItem(db, s))) as Promise<D1Result[]> : undefined;
  ahead.passages = searchKnowledgeBase(ctx.env, db, { knowledgeBaseId: kb.id, knowledgeBase: kb, query, limit, send, onEmbeddingUsage: (u) => (ahead.embedding = u) }).then(
    (found) => found.map(turnPassage),
  );
  ahead.passages.catch(() => {}); // dropped unless the request is authorized
  return ahead;
}

/**
 * The search's passages, once the read authorized the request (`kb`: the knowledge base as read now); undefined
 * when they cannot stand for a search of it now (the caller then searches as usual).
 */
export async function searchedAhead(ctx: ServiceContext, ahead: SearchAhead | null, kb: KnowledgeBase): Promise<Passage[] | undefined> {
  if (!ahead) return undefined;
  // The same index version too: a search ahead may have used this isolate's copy of the vectors at its version.
  const same =
    ahead.kb.id === kb.id &&
    ahead.kb.embeddingModel === kb.embeddingModel &&
    ahead.kb.embeddingDimensions === kb.embeddingDimensions &&
    ahead.kb.indexVersion === kb.indexVersion;
  try {
    const passages = await ahead.passages;
    return same ? passages : undefined;
  } catch {
    return undefined; // searched again, which reports what fails
  } finally {
    // The query embedding was paid for this authorized request, used or not (recorded off its path).
    const { model, tokens } = ahead.embedding;
    if (tokens > 0) ctx.waitUntil(meterEmbedding(ctx.db, ctx.env, { organizationId: kb.organizationId, tenantId: kb.tenantId, model, tokens, actor: actorOf(ctx.caller) }));
  }
}

/**
 * A turn's first search, started before the turn's read (sendCommand; a new chat's first turn: createOrReplay):
 * quick mode's one search, or deep mode's
 * when the question is not split into parts (one search of the whole question; the plan's own `decompose`).
 */
export function turnSearchAhead(ctx: ServiceContext, reach: Reach, turn: { content: string; agent_mode: string }, ride = false): SearchAhead | null {
  if (turn.agent_mode === "quick") return searchAhead(ctx, reach, turn.content, QUICK_PASSAGES, ride);
  if (decompose(turn.content).length <= 1) return searchAhead(ctx, reach, turn.content, DEEP_PASSAGES_PER_PART, ride);
  return null;
}

/**
 * A turn's first search for a request already authorized, started beside the writes that precede its turn (an
 * agent run's chat and run, src/services/agents/run-search.ts): quick mode's one search, or deep mode's unsplit one.
 */
export function authorizedTurnSearch(ctx: ServiceContext, kb: KnowledgeBase, turn: { content: string; agent_mode: string }): SearchAhead | null {
  if (turn.agent_mode === "quick") return startSearch(ctx, kb, turn.content, QUICK_PASSAGES);
  if (decompose(turn.content).length <= 1) return startSearch(ctx, kb, turn.content, DEEP_PASSAGES_PER_PART);
  return null;
}

/** A turn's search for its command, once the read authorized it (`transcript`: where the chat ends). */
export async function turnSearchedAhead(ctx: ServiceContext, ahead: SearchAhead | null, kb: KnowledgeBase, transcript: { count: number }): Promise<SearchedAheadResult | undefined> {
  if (!ahead) return undefined;
  const passages = await searchedAhead(ctx, ahead, kb);
  // A short follow-up is searched with the previous question: the search ahead used the message alone.
  const alone = terms(ahead.query).length >= 3 || transcript.count === 0;
  return passages && alone ? { query: ahead.query, limit: ahead.limit, passages } : undefined;
}

import type { ServiceContext } from "../../contracts/context";
import type { RecalledAhead } from "../../contracts/chat-session";
import { recallReads, type RecallReads } from "../memory/recall";
import { explicitCommands } from "../memory/rules";
import { scopeKeyOf, spaceKnowledgeBaseId } from "../memory/settings";
import { rememberedPlacement, type Reach, type SearchAhead } from "./search-ahead";

/**
 * A turn's memory recall, read ahead (README "Latency"). With memory on, the recall's reads are a D1 round trip
 * of their own after the turn's read. Like the search ahead, they start beside that read for a caller who reached
 * the chat before in this isolate: in the memory space that chat's turns used, from the knowledge base's memory
 * mode and the turn's subject as remembered then. Only the reads are made ahead (FTS5 candidates, the space's
 * size and its stored vectors: src/services/memory/recall.ts `recallReads`); nothing is embedded or charged.
 *
 * Nothing is trusted: the reads go to the chat's Durable Object only once the turn's read authorized the request
 * (turnRecalledAhead), and the turn uses them only when its own memory space, from the knowledge base, subject
 * and tenant settings as read now, has the same scope key (a hash of tenant, knowledge base and subject: the
 * same key is the same space) and its recall the same query (src/services/memory/turn.ts). A message with a
 * memory command ("remember …", "forget …") is not read ahead: its recall must see what the command changes.
 * The reads are live, in the request's own D1 session, as the search ahead's are.
 *
 * A recall is read ahead only with a search ahead (`searching`): it shares its place among the few an isolate
 * runs at once (search-ahead.ts MAX_AHEAD_IN_FLIGHT). Reads larger than MAX_AHEAD_CHARS (a big space's stored
 * vectors) are not sent on to the turn: carrying them through the Worker would cost more than the round trip saved.
 */
export const MAX_AHEAD_CHARS = 256 * 1024;
export interface RecallAhead {
  scopeKey: Promise<string>;
  query: string;
  reads: Promise<RecallReads>;
}

export function recallAhead(ctx: ServiceContext, reach: Reach, content: string, searching: SearchAhead | null): RecallAhead | null {
  const known = rememberedPlacement(ctx.caller, reach);
  if (!searching || !known?.subject || known.kb.kbMemoryMode === "disabled") return null;
  const commands = explicitCommands(content);
  if (commands.remember.length || commands.forget.length) return null;
  const scopeKey = scopeKeyOf(known.kb.tenantId, spaceKnowledgeBaseId(known.kb), known.subject);
  const reads = scopeKey.then((key) => recallReads(ctx.db, ctx.env, { scopeKey: key }, content));
  reads.catch(() => {}); // dropped unless the request is authorized
  return { scopeKey, query: content, reads };
}

/** The recall's reads for the turn's command, once the turn's read authorized the request; undefined if they failed. */
export async function turnRecalledAhead(ahead: RecallAhead | null): Promise<RecalledAhead | undefined> {
  if (!ahead) return undefined;
  try {
    const reads = await ahead.reads;
    if (sizeOf(reads) > MAX_AHEAD_CHARS) return undefined; // the turn recalls for itself
    return { scopeKey: await ahead.scopeKey, query: ahead.query, reads };
  } catch {
    return undefined; // the turn recalls for itself, which reports what fails
  }
}

/** About how many characters the reads take as JSON: their text and stored vectors. */
function sizeOf(reads: RecallReads): number {
  let n = 0;
  for (const r of [...reads.lexical.rows, ...reads.vector.rows]) n += r.content.length + r.entities.length + (r.embedding?.length ?? 0) + 400;
  return n;
}

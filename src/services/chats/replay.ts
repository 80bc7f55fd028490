import type { Chat, Message } from "../../db/schema";
import type { ServiceContext } from "../../contracts/context";
import { sha256Hex } from "../../lib/crypto";
import { ApiError, conflict } from "../../lib/errors";
import { nowIso } from "../../lib/time";
import { answerAfter, getChat, getMessage } from "./chats";
import { settleTurn } from "./answer-record";
import type { ChatPlacement } from "./turns";

/**
 * A retried `POST /chats` (README "Crash safety"): a client that lost the answer to its create (a timeout, a
 * crash of the service) sends the same request again. When the chat with that id was created by the same caller,
 * in the same knowledge base, with the same first message, the retry answers what the first request would have —
 * the chat and its first turn — instead of 409 (like an idempotency key). Anything else with a used id is 409.
 */

/** What a chat created with a first message remembers of it (in its settings). */
export interface FirstMessage {
  id: string;
  sha256: string;
}

export const firstMessageDigest = (message: string) => sha256Hex(message);

export const firstMessageOf = (chat: Chat): FirstMessage | null =>
  ((chat.settings ?? {}) as { first_message?: FirstMessage }).first_message ?? null;

/** Whether `chat` is what this create request made (same owner, place and first message). */
export function isSameCreate(chat: Chat, placement: ChatPlacement, apiKeyId: string | null, digest: string | null): boolean {
  const first = firstMessageOf(chat);
  return (
    !!digest &&
    first?.sha256 === digest &&
    chat.tenantId === placement.tenantId &&
    chat.knowledgeBaseId === placement.knowledgeBaseId &&
    chat.ownerUserId === placement.ownerUserId &&
    chat.externalSubjectId === placement.externalSubjectId &&
    (apiKeyId === null || chat.createdByApiKeyId === apiKeyId)
  );
}

export const chatIdTaken = (id: string) => conflict("conflict", `A chat with id ${id} already exists`);

/** How long a retry waits for a first turn that is still running. */
const WAIT_MS = 90_000;
const POLL_MS = 250;

/**
 * The first turn's answer once it has settled: finished, or settled by the supervisor — or settled here, when
 * the turn's lease lapsed (its worker is gone). Null when the first turn never started.
 */
export async function awaitFirstAnswer(ctx: ServiceContext, chat: Chat): Promise<{ user: Message; answer: Message } | null> {
  const db = ctx.db;
  const first = firstMessageOf(chat)!;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const user = await getMessage(db, chat.id, first.id);
    if (!user) return null;
    const answer = await answerAfter(db, chat.id, user.seq);
    if (answer && !answer.metadata.in_progress) return { user, answer };
    const fresh = await getChat(db, chat.id);
    if (fresh?.turnMessageId && fresh.turnLeaseExpiresAt && fresh.turnLeaseExpiresAt < nowIso()) {
      await settleTurn(db, chat.id, fresh.turnMessageId, nowIso());
      continue;
    }
    if (Date.now() > deadline) {
      throw new ApiError("conflict", "The chat's first answer is still being written; retry shortly", { headers: { "Retry-After": "5" } });
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

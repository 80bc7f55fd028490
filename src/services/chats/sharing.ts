import { and, desc, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { membershipOf } from "../../auth/authorize";
import type { Caller } from "../../contracts/caller";
import type { Database } from "../../db/client";
import { knowledgeBases, messages, type Chat, type Message, type MessageMetadata } from "../../db/schema";
import { getChat } from "./chats";

export const SHARED_TRANSCRIPT_LIMIT = 200;
export const FORK_SEED_LIMIT = 120;

/** Metadata keys a shared transcript may expose (specification, "Shared-chat transcript"). */
const SHARE_SAFE_KEYS = ["sources", "memoryUsed", "delegatedAgentIds", "imageUrls"] as const;

export function shareSafeMetadata(md: MessageMetadata | null | undefined): Pick<MessageMetadata, (typeof SHARE_SAFE_KEYS)[number]> | undefined {
  if (!md) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of SHARE_SAFE_KEYS) if (md[k] !== undefined) out[k] = md[k];
  return Object.keys(out).length ? (out as MessageMetadata) : undefined;
}

export function shareSafeMessage(m: Message) {
  const metadata = shareSafeMetadata(m.metadata);
  return { role: m.role, content: m.content, ...(metadata ? { metadata } : {}) };
}

/**
 * Who may read a chat's shared transcript: `public` anyone; `org` a signed-in
 * member of the chat's organization; `private` nobody (404, even the owner).
 */
export async function canReadShared(ctx: ServiceContext, chat: Chat, caller: Caller | null): Promise<boolean> {
  if (chat.accessLevel === "public") return true;
  if (chat.accessLevel === "org") {
    if (caller?.type !== "user") return false;
    return Boolean(await membershipOf(ctx, caller, chat.organizationId));
  }
  return false;
}

/** The most recent share-safe messages (user and assistant turns with content), oldest first. */
export async function shareSafeMessages(db: Database, chatId: string, limit: number) {
  const rows = await db
    .select()
    .from(messages)
    .where(and(eq(messages.chatId, chatId), inArray(messages.status, ["complete", "partial"])))
    .orderBy(desc(messages.seq))
    .limit(limit + 1)
    .all();
  const truncated = rows.length > limit;
  return { rows: rows.slice(0, limit).reverse(), truncated };
}

export async function sharedTranscript(ctx: ServiceContext, chatId: string, caller: Caller | null) {
  const db = ctx.db;
  const chat = await getChat(db, chatId.toLowerCase());
  if (!chat || !(await canReadShared(ctx, chat, caller))) return null;
  const kb = await db.select({ name: knowledgeBases.name }).from(knowledgeBases).where(eq(knowledgeBases.id, chat.knowledgeBaseId)).get();
  const { rows, truncated } = await shareSafeMessages(db, chat.id, SHARED_TRANSCRIPT_LIMIT);
  return {
    chat: {
      id: chat.id,
      title: chat.title,
      knowledgeBaseId: chat.knowledgeBaseId,
      knowledgeBaseName: kb?.name ?? null,
      accessLevel: chat.accessLevel,
      transcriptTruncated: truncated,
    },
    messages: rows.map(shareSafeMessage),
  };
}

import { and, asc, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import { inKnowledgeBase, knowledgeBaseRowScope, type ResourceScope } from "../../auth/resources";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { chats, messages, type Chat, type ChatSettings, type ChatTodo, type KnowledgeBase, type Message, type MessageMetadata } from "../../db/schema";
import { conflict, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { pageOf } from "../../db/page";
import { publicMessage } from "../../contracts/messages";

export { publicMessage };

export const TITLE_MAX = 255;
export const truncateTitle = (t: string) => (t.length > TITLE_MAX ? t.slice(0, TITLE_MAX) : t);

export const chatScope = (chat: Chat | undefined | null): ResourceScope | null => knowledgeBaseRowScope(chat);

export function publicChat(chat: Chat) {
  return {
    id: chat.id,
    tenant_id: chat.tenantId,
    knowledge_base_id: chat.knowledgeBaseId,
    model: chat.model,
    title: chat.title,
    access_level: chat.accessLevel,
    external_subject_id: chat.externalSubjectId,
    agent_mode: chat.agentMode,
    is_query: chat.isQuery,
    shared_source_chat_id: chat.sharedSourceChatId,
    websearch_enable: chat.settings.websearch_enable ?? false,
    message_count: chat.messageCount,
    last_message_at: chat.lastMessageAt,
    terminated_at: chat.terminatedAt,
    termination_reason: chat.terminationReason,
    created_at: chat.createdAt,
    updated_at: chat.updatedAt,
  };
}

export async function getChat(db: Database, id: string): Promise<Chat | undefined> {
  return db.select().from(chats).where(eq(chats.id, id)).get();
}

export interface NewChat {
  id: string;
  kb: KnowledgeBase;
  model: string;
  title?: string | null;
  ownerUserId: string | null;
  apiKeyId: string | null;
  externalSubjectId: string | null;
  agentMode: Chat["agentMode"];
  isQuery?: boolean;
  sharedSourceChatId?: string | null;
  settings: ChatSettings;
}

export async function createChat(db: Database, input: NewChat): Promise<Chat> {
  const chat = newChatRow(input);
  try {
    await db.insert(chats).values(chat);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict("conflict", `A chat with id ${chat.id} already exists`);
    throw e;
  }
  return chat;
}

/** The row `createChat` inserts (for a caller that inserts it in a batch with other writes). */
export function newChatRow(input: NewChat): Chat {
  const now = nowIso();
  return {
    id: input.id.toLowerCase(),
    ...inKnowledgeBase(input.kb),
    model: input.model,
    title: input.title ? truncateTitle(input.title) : null,
    accessLevel: "private",
    ownerUserId: input.ownerUserId,
    createdByApiKeyId: input.apiKeyId,
    externalSubjectId: input.externalSubjectId,
    agentMode: input.agentMode,
    isQuery: input.isQuery ?? false,
    sharedSourceChatId: input.sharedSourceChatId ?? null,
    settings: input.settings,
    todo: null,
    summary: null,
    summaryThroughSeq: 0,
    terminatedAt: null,
    terminationReason: null,
    messageCount: 0,
    lastMessageAt: null,
    turnMessageId: null,
    turnLeaseExpiresAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

export interface ChatListFilter {
  tenantId: string;
  knowledgeBaseId?: string;
  ownerUserId?: string;
  /** API-key listings: only chats created through keys (never users' private chats). */
  keyCreated?: boolean;
  externalSubjectId?: string;
  isQuery?: boolean;
}

export async function listChats(db: Database, f: ChatListFilter, page: { limit: number; offset: number }) {
  const conds: SQL[] = [eq(chats.tenantId, f.tenantId)];
  if (f.knowledgeBaseId) conds.push(eq(chats.knowledgeBaseId, f.knowledgeBaseId));
  if (f.ownerUserId) conds.push(eq(chats.ownerUserId, f.ownerUserId));
  if (f.keyCreated) conds.push(isNull(chats.ownerUserId));
  if (f.externalSubjectId !== undefined) conds.push(eq(chats.externalSubjectId, f.externalSubjectId));
  if (f.isQuery !== undefined) conds.push(eq(chats.isQuery, f.isQuery));
  const where = and(...conds);
  return pageOf(db, chats, where, [desc(chats.updatedAt), desc(chats.id)], page);
}

export async function updateChat(db: Database, id: string, set: Partial<Chat>): Promise<Chat> {
  const row = await db.update(chats).set({ ...set, updatedAt: nowIso() }).where(eq(chats.id, id)).returning().get();
  if (!row) throw notFound("Chat");
  return row;
}

export async function deleteChat(db: Database, id: string): Promise<void> {
  await db.delete(chats).where(eq(chats.id, id));
}

/** Ends the agent session; messages stay for audit. Terminating twice keeps the first record. */
export async function terminateChat(db: Database, chat: Chat, reason: string | null): Promise<Chat> {
  if (chat.terminatedAt) return chat;
  return updateChat(db, chat.id, { terminatedAt: nowIso(), terminationReason: reason });
}

export async function setTodo(db: Database, chatId: string, todo: ChatTodo | null): Promise<void> {
  await db.update(chats).set({ todo }).where(eq(chats.id, chatId));
}

// ---- Messages ----------------------------------------------------------------

export async function appendMessage(
  db: Database,
  chatId: string,
  input: { role: Message["role"]; content: string; status?: Message["status"]; metadata?: MessageMetadata; id?: string },
): Promise<Message> {
  const id = input.id ?? newId("msg");
  const createdAt = nowIso();
  const metadata = input.metadata ?? {};
  // seq is computed in the same statement; UNIQUE(chat_id, seq) guards races.
  for (let attempt = 0; ; attempt++) {
    try {
      // One round trip: the row is known but for its seq, which RETURNING gives back.
      const [inserted] = await db.all<{ seq: number }>(sql`
        INSERT INTO messages (id, chat_id, seq, role, content, status, metadata, created_at)
        SELECT ${id}, ${chatId}, COALESCE(MAX(seq), 0) + 1, ${input.role}, ${input.content},
               ${input.status ?? "complete"}, ${JSON.stringify(metadata)}, ${createdAt}
        FROM messages WHERE chat_id = ${chatId}
        RETURNING seq`);
      return { id, chatId, seq: inserted!.seq, role: input.role, content: input.content, status: input.status ?? "complete", metadata, createdAt };
    } catch (e) {
      if (attempt < 3 && isUniqueViolation(e)) continue;
      throw e;
    }
  }
}

/**
 * A conversation a client holds and sends whole (the OpenAI-compatible endpoint, agent runs started
 * from it), written into a chat that has no messages yet: one batch, in order, so the turn that
 * follows reads it as its history.
 */
export async function seedMessages(db: Database, chatId: string, items: Array<{ role: Message["role"]; content: string }>): Promise<void> {
  const inserts = seedInserts(db, chatId, items);
  if (inserts.length) await db.batch(inserts as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
}

/** The inserts of `seedMessages` (seq 1…n, one statement each), for a caller that batches them with other writes. */
export function seedInserts(db: Database, chatId: string, items: Array<{ role: Message["role"]; content: string }>): BatchItem<"sqlite">[] {
  const createdAt = nowIso();
  return items.map((m, i) =>
    db.insert(messages).values({ id: newId("msg"), chatId, seq: i + 1, role: m.role, content: m.content, status: "complete", metadata: {}, createdAt }),
  );
}

export async function updateMessage(
  db: Database,
  id: string,
  set: { content?: string; status?: Message["status"]; metadata?: MessageMetadata },
): Promise<Message | undefined> {
  return db.update(messages).set(set).where(eq(messages.id, id)).returning().get();
}

export async function getMessage(db: Database, chatId: string, id: string): Promise<Message | undefined> {
  return db.select().from(messages).where(and(eq(messages.chatId, chatId), eq(messages.id, id))).get();
}

/** The first answer after the message at `seq` (the answer to it). */
export async function answerAfter(db: Database, chatId: string, seq: number): Promise<Message | undefined> {
  return db
    .select()
    .from(messages)
    .where(and(eq(messages.chatId, chatId), eq(messages.role, "assistant"), sql`${messages.seq} > ${seq}`))
    .orderBy(asc(messages.seq))
    .limit(1)
    .get();
}

export async function listMessages(db: Database, chatId: string, page: { limit: number; offset: number }) {
  return pageOf(db, messages, eq(messages.chatId, chatId), [asc(messages.seq)], page);
}

/** The `limit` most recent messages, oldest first. */
export async function recentMessages(db: Database, chatId: string, limit: number, afterSeq = 0): Promise<Message[]> {
  const rows = await db
    .select()
    .from(messages)
    .where(and(eq(messages.chatId, chatId), sql`${messages.seq} > ${afterSeq}`))
    .orderBy(desc(messages.seq))
    .limit(limit)
    .all();
  return rows.reverse();
}

export async function deleteMessage(db: Database, chatId: string, messageId: string): Promise<boolean> {
  const row = await db
    .delete(messages)
    .where(and(eq(messages.id, messageId), eq(messages.chatId, chatId)))
    .returning({ id: messages.id })
    .get();
  return Boolean(row);
}


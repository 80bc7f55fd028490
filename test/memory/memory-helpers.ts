import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { chats, knowledgeBases } from "../../src/db/schema";
import type { Emit, TurnEvent } from "../../src/services/answer/types";
import { memoryAfterTurn, memoryContext } from "../../src/services/memory/turn";
import { emptyToolSettings, type TurnScope } from "../../src/services/tools/types";
import { call, createKb, expectStatus, type Auth, type TestOrg } from "../helpers";

export const db = () => createDb(env.DB);

export async function setMemorySettings(org: TestOrg, body: Record<string, unknown>, tenantId = org.tenantId) {
  return expectStatus(await call(`/tenants/${tenantId}/memory-settings`, { cookie: org.owner.cookie, method: "PATCH", body }), 200);
}

export async function memoryKb(org: TestOrg, mode: "disabled" | "subject" | "kb_restricted", tenantId = org.tenantId) {
  const kb = await createKb(org, { tenant_id: tenantId });
  return expectStatus(await call(`/knowledge-bases/${kb.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { kbMemoryMode: mode } }), 200) as typeof kb;
}

/** A chat with one stored turn (the current pipeline answers it); returns the chat id and the user message. */
export async function chatWithTurn(auth: Auth, kb: { id: string; tenant_id: string }, message: string, extra: Record<string, unknown> = {}) {
  const r = await call("/chats", {
    ...auth,
    body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message, ...extra },
  });
  expectStatus(r, 201);
  return { chatId: r.body.chat.id as string, userMessage: r.body.user_message, assistantMessage: r.body.assistant_message };
}

export async function scopeFor(chatId: string, subject: string, actor: TurnScope["actor"] = {}): Promise<TurnScope> {
  const d = db();
  const chat = (await d.select().from(chats).where(eq(chats.id, chatId)).get())!;
  const kb = (await d.select().from(knowledgeBases).where(eq(knowledgeBases.id, chat.knowledgeBaseId)).get())!;
  return { db: d, env: env as any, chat, kb, actor, subject, mode: "quick", streaming: false, runId: null, depth: 0 };
}

/**
 * One turn as the toolbox loop runs it for memory: the context provider at
 * gather time, the stored turn, then the after-turn hook. Returns what memory
 * contributed and the events it emitted.
 */
export async function memoryTurn(auth: Auth, kb: { id: string; tenant_id: string }, subject: string, message: string, opts: { chatId?: string; model?: string } = {}) {
  let chatId = opts.chatId;
  let turn: Awaited<ReturnType<typeof chatWithTurn>> | null = null;
  if (!chatId) {
    turn = await chatWithTurn(auth, kb, message, opts.model ? { model: opts.model } : {});
    chatId = turn.chatId;
  } else {
    const r = await call(`/chats/${chatId}/messages`, { ...auth, body: { content: message, model: opts.model ?? "local-extractive" } });
    expectStatus(r, 200);
    turn = { chatId, userMessage: r.body.user_message, assistantMessage: r.body.assistant_message };
  }
  const scope = await scopeFor(chatId, subject);
  const gathered = await memoryContext.gather(scope, message, new AbortController().signal);
  const events: TurnEvent[] = [];
  const emit: Emit = (e) => void events.push(e);
  const d = db();
  const { messages } = await import("../../src/db/schema");
  const userMessage = (await d.select().from(messages).where(eq(messages.id, turn.userMessage.id)).get())!;
  const assistantMessage = (await d.select().from(messages).where(eq(messages.id, turn.assistantMessage.id)).get())!;
  await memoryAfterTurn.run(
    scope,
    { userMessage, assistantMessage, status: "complete", usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, credits: 0 }, question: message },
    emit,
  );
  return { chatId, gathered, events, userMessageId: userMessage.id };
}

export { emptyToolSettings };

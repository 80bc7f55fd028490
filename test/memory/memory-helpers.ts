import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { chats, knowledgeBases } from "../../src/db/schema";
import type { Emit, TurnEvent } from "../../src/contracts/turn";
import { appendMessage } from "../../src/services/chats/chats";
import { memoryAfterTurn, memoryContext } from "../../src/services/memory/turn";
import { emptyToolSettings, type TurnScope } from "../../src/contracts/tools";
import { call, createKb, expectStatus, type Auth, type TestOrg } from "../helpers";

export const db = () => createDb(env.DB);

export async function setMemorySettings(org: TestOrg, body: Record<string, unknown>, tenantId = org.tenantId) {
  return expectStatus(await call(`/tenants/${tenantId}/memory-settings`, { cookie: org.owner.cookie, method: "PATCH", body }), 200);
}

export async function memoryKb(org: TestOrg, mode: "disabled" | "subject" | "kb_restricted", tenantId = org.tenantId) {
  const kb = await createKb(org, { tenant_id: tenantId });
  return expectStatus(await call(`/knowledge-bases/${kb.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { kbMemoryMode: mode } }), 200) as typeof kb;
}

export async function scopeFor(chatId: string, subject: string, actor: TurnScope["actor"] = {}): Promise<TurnScope> {
  const d = db();
  const chat = (await d.select().from(chats).where(eq(chats.id, chatId)).get())!;
  const kb = (await d.select().from(knowledgeBases).where(eq(knowledgeBases.id, chat.knowledgeBaseId)).get())!;
  return { db: d, env: env as any, chat, kb, actor, subject, mode: "quick", streaming: false, runId: null, depth: 0 };
}

/**
 * One turn as the toolbox loop runs it for memory, with the loop itself left
 * out (so nothing else writes memories): the user message stored, the context
 * provider at gather time, the answer stored, then the after-turn hook.
 * Returns what memory contributed and the events it emitted.
 */
export async function memoryTurn(auth: Auth, kb: { id: string; tenant_id: string }, subject: string, message: string, opts: { chatId?: string; model?: string } = {}) {
  let chatId = opts.chatId;
  if (!chatId) {
    const r = await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: opts.model ?? "local-extractive" } });
    chatId = expectStatus(r, 201).chat.id as string;
  }
  const d = db();
  const userMessage = await appendMessage(d, chatId, { role: "user", content: message });
  const scope = await scopeFor(chatId, subject);
  const gathered = await memoryContext.gather(scope, message, new AbortController().signal);
  const assistantMessage = await appendMessage(d, chatId, { role: "assistant", content: "(answer)", metadata: { ...(gathered?.metadata ?? {}) } });
  const events: TurnEvent[] = [];
  const emit: Emit = (e) => void events.push(e);
  await memoryAfterTurn.run(
    scope,
    { userMessage, assistantMessage, status: "complete", usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, credits: 0 }, question: message },
    emit,
  );
  return { chatId, gathered, events, userMessageId: userMessage.id };
}

export { emptyToolSettings };

import type { Message, MessageMetadata, TurnUsage } from "../../../db/schema";
import { chargeStatements } from "../../billing/metering";
import { answerOfRow, batchWithRetry, type ChatCounters, endTurnStatement, insertUserStatement, messageOfRow, upsertAnswerStatement } from "../../chats/answer-record";
import type { TurnContext, TurnResult } from "../context";
import type { StopReason } from "../../../contracts/turn";
import type { AfterTurnHook, FinalWritePart, TurnEndForHooks } from "../../../contracts/tools";
import { isUniqueViolation } from "../../../db/errors";

export interface Outcome {
  content: string;
  status: Message["status"];
  stopReason?: StopReason;
  error?: TurnResult["error"];
}

/** What the turn's final write charges: the answer's usage, and the statements that set its charge to it. */
export interface Metered {
  usage: TurnUsage;
  charge: D1PreparedStatement[];
}

/**
 * Stage: metering. The answer's model calls, charged once (also for partial and failed turns): the charge is SET
 * to this usage under the turn's key, so what its checkpoints already charged is only topped up (or trued down).
 */
export function meterStage(ctx: TurnContext, assistantId: string): Metered {
  const { chat, model } = ctx.req;
  const { statements, recorded } = chargeStatements(ctx.deps.db.$client, {
    organizationId: chat.organizationId,
    tenantId: chat.tenantId,
    operation: ctx.req.operation,
    model: model.id,
    pricing: model.pricing,
    usage: ctx.used,
    actor: ctx.req.actor,
    chatId: chat.id,
    messageId: assistantId,
    agentRunId: ctx.req.runId ?? null,
    idempotencyKey: `turn:${assistantId}`,
  });
  return {
    usage: { input_tokens: recorded.input_tokens, output_tokens: recorded.output_tokens, total_tokens: recorded.total_tokens, credits: recorded.credits },
    charge: statements,
  };
}

/**
 * Stage: persistence. The answer with its sources and the owner's operational metadata, its charge, and the end
 * of the turn's lease, in one write (replacing what the checkpoints saved under the same id). `announced`: the
 * user message of a turn whose own write may not have landed yet; it is appended first when absent, so this write
 * need not wait for that one (src/services/chats/answer-record.ts, beginTurn).
 */
export async function persistStage(
  ctx: TurnContext,
  assistantId: string,
  outcome: Outcome,
  metered: Metered,
  createdAt: string,
  announced?: Message,
): Promise<{ assistant: Message; appended?: Message; chat: ChatCounters; hooks: HookResults }> {
  const usage = metered.usage;
  const metadata: MessageMetadata = {
    sources: ctx.ledger.all,
    usage,
    model: ctx.req.model.id,
    memoryUsed: false,
    ...ctx.contextMetadata,
    ...(ctx.runner.delegatedAgentIds.length ? { delegatedAgentIds: ctx.runner.delegatedAgentIds } : {}),
    ...(ctx.runner.calls.length ? { tool_calls: ctx.runner.calls } : {}),
    ...(ctx.req.runId ? { run_id: ctx.req.runId } : {}),
    ...(outcome.error ? { error: { code: outcome.error.code, message: outcome.error.message } } : {}),
    ...(outcome.stopReason ? { stop_reason: outcome.stopReason } : {}),
  };
  const d1 = ctx.deps.db.$client;
  const chatId = ctx.req.chat.id;
  // An announced user message whose own write has not landed is appended here (its row comes back as the chat has it).
  const user = announced ? [insertUserStatement(d1, chatId, announced, true)] : [];
  const answer = { id: assistantId, content: outcome.content, status: outcome.status, metadata, createdAt };
  const turn = [
    ...metered.charge,
    ...user,
    upsertAnswerStatement(d1, chatId, answer),
    // Last, so that the chat's counters it returns count both messages.
    endTurnStatement(d1, chatId, assistantId),
  ];
  const parts = hookParts(ctx, { messageId: assistantId, content: outcome.content, status: outcome.status, stopReason: outcome.stopReason, error: outcome.error ? { code: outcome.error.code, message: outcome.error.message } : null, usage });
  let results: D1Result[];
  try {
    results = await batchWithRetry(d1, () => [...turn, ...parts.flatMap((p) => p.part.statements)]);
  } catch (e) {
    if (!parts.length || isUniqueViolation(e)) throw e;
    // A hook's statements never fail the answer: it is written without them, and the hooks run after it.
    console.error(`final write of chat ${chatId} failed with the after-turn hooks' statements; written without them:`, e);
    parts.length = 0;
    results = await batchWithRetry(d1, () => turn);
  }
  const at = metered.charge.length + user.length;
  const row = (i: number) => messageOfRow(results[i].results[0] as Parameters<typeof messageOfRow>[0]);
  const counters = results[turn.length - 1].results[0] as { message_count: number; last_message_at: string | null } | undefined;
  const chat = { messageCount: counters?.message_count ?? 0, lastMessageAt: counters?.last_message_at ?? null };
  const assistant = answerOfRow(chatId, answer, results[at].results[0] as { seq: number; created_at: string });
  return { assistant, ...(announced ? { appended: row(at - 1) } : {}), chat, hooks: settleParts(ctx, parts, results.slice(turn.length)) };
}

type HookPart = { hook: AfterTurnHook; part: FinalWritePart };

/** The after-turn hooks' statements for the final write (a hook that fails to make them is run after it instead). */
function hookParts(ctx: TurnContext, end: TurnEndForHooks): HookPart[] {
  return ctx.deps.capabilities.afterTurn.flatMap((hook) => {
    try {
      const part = hook.finalWrite?.(ctx.scope, end);
      return part ? [{ hook, part }] : [];
    } catch (e) {
      console.error(`after-turn hook ${hook.name} could not join the final write of chat ${ctx.req.chat.id}:`, e instanceof Error ? e.message : e);
      return [];
    }
  });
}

/** What each hook written with the answer makes of its results (as its `run` would return it). */
function settleParts(ctx: TurnContext, parts: HookPart[], results: D1Result[]): HookResults {
  const settled: HookResults = new Map();
  let i = 0;
  for (const { hook, part } of parts) {
    const mine = results.slice(i, (i += part.statements.length));
    try {
      settled.set(hook, part.settle(mine) ?? undefined);
    } catch (e) {
      settled.set(hook, undefined);
      console.error(`after-turn hook ${hook.name} failed in chat ${ctx.req.chat.id}:`, e instanceof Error ? e.message : e);
    }
  }
  return settled;
}

/** The hooks written with the answer (AfterTurnHook.finalWrite), and what each returned. */
export type HookResults = Map<AfterTurnHook, { done?: Record<string, unknown> } | undefined>;

/** Stage: after-turn hooks (memory extraction, finishing an agent run); returns what they add to `done`. */
export async function afterTurnStage(
  ctx: TurnContext,
  turn: { userMessage: Message; assistantMessage: Message; outcome: Outcome; usage: TurnUsage },
  written: HookResults,
): Promise<Record<string, unknown>> {
  const extras: Record<string, unknown> = {};
  for (const hook of ctx.deps.capabilities.afterTurn) {
    try {
      // A hook written with the answer (its part of the final write) is done.
      const r = written.has(hook)
        ? written.get(hook)
        : await hook.run(
            ctx.scope,
            {
              userMessage: turn.userMessage,
              assistantMessage: turn.assistantMessage,
              status: turn.outcome.status,
              stopReason: turn.outcome.stopReason,
              error: turn.outcome.error ? { code: turn.outcome.error.code, message: turn.outcome.error.message } : undefined,
              usage: turn.usage,
              question: ctx.req.content,
            },
            ctx.emit,
          );
      if (r?.done) Object.assign(extras, r.done);
    } catch (e) {
      console.error(`after-turn hook ${hook.name} failed in chat ${ctx.req.chat.id}:`, e instanceof Error ? e.message : e);
    }
  }
  return extras;
}

/** Stage: closing events — `tokens` and `done`, or `error`. */
export async function closingEvents(ctx: TurnContext, assistantId: string, outcome: Outcome, usage: TurnUsage, doneExtras: Record<string, unknown>) {
  const chatId = ctx.req.chat.id;
  if (outcome.status === "error") {
    const e = outcome.error!;
    await ctx.emit({ type: "error", message: e.message, code: e.code, retryable: e.retryable, chat_id: chatId, message_id: assistantId });
    return;
  }
  await ctx.emit({ type: "tokens", usage });
  await ctx.emit({
    type: "done",
    chat_id: chatId,
    message_id: assistantId,
    usage,
    status: outcome.status,
    ...(outcome.stopReason ? { stop_reason: outcome.stopReason } : {}),
    ...doneExtras,
    ...d1Bookmark(ctx),
  });
}

/** `done` says where the turn's D1 session ended (after its final write): a client sends it as X-D1-Bookmark to read it back. */
function d1Bookmark(ctx: TurnContext): { d1_bookmark?: string } {
  const b = ctx.deps.bookmark?.();
  return b ? { d1_bookmark: b } : {};
}

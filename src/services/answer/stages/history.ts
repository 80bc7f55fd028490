import type { Message } from "../../../db/schema";
import { recordUsage } from "../../billing/metering";
import { complete } from "../../models/llm";
import { isLocal, thought, type TurnContext } from "../context";
import { extractiveSummary, loadHistory, type History } from "../history";

/**
 * Stage: history. The most recent turns stay verbatim; older ones are folded
 * into the chat's rolling summary (metered as `summary`).
 */
export async function historyStage(ctx: TurnContext, userMessage: Message): Promise<History> {
  const { db, env } = ctx.deps;
  const { chat, model, known } = ctx.req;
  const history = await loadHistory(db, chat, {
    contextWindow: model.context_window,
    currentSeq: userMessage.seq,
    // What the chat's Durable Object holds (nothing, for a chat without messages): no read.
    preloaded: known?.recent ?? (known?.emptyHistory ? [] : undefined),
    summarize: async (previous, fold) => {
      if (isLocal(model)) {
        const text = extractiveSummary(previous, fold);
        const input = fold.reduce((s, m) => s + Math.ceil(m.content.length / 4), 0);
        return { text, usage: { input_tokens: input, output_tokens: Math.ceil(text.length / 4) }, model: model.id };
      }
      const r = await complete(env, model, {
        system:
          "You maintain a running summary of a conversation between a user and an assistant. Keep facts, names, " +
          "numbers, decisions and open questions; drop pleasantries. At most 300 words.",
        prompt: `Previous summary:\n${previous ?? "(none)"}\n\nNew messages:\n${fold.map((m) => `${m.role}: ${m.content}`).join("\n\n")}\n\nWrite the updated summary.`,
        signal: ctx.signal,
      });
      return { text: r.text.trim(), usage: r.usage, model: model.id };
    },
  });
  if (history.summarized) {
    await recordUsage(db, {
      organizationId: chat.organizationId,
      tenantId: chat.tenantId,
      operation: "summary",
      model: history.summarized.model,
      pricing: model.pricing,
      usage: history.summarized.usage,
      actor: ctx.req.actor,
      chatId: chat.id,
      messageId: userMessage.id,
      agentRunId: ctx.req.runId ?? null,
      idempotencyKey: `summary:${userMessage.id}`,
    });
    await thought(ctx, `Summarized ${history.summarized.messages} earlier messages to keep the conversation within the model's context.`);
  }
  ctx.signal.throwIfAborted();
  ctx.transcript = history.recent;
  return history;
}

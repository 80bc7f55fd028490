import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { AfterTurnHook } from "../../src/contracts/tools";
import { openDb } from "../../src/db/client";
import type { TurnContext } from "../../src/services/answer/context";
import { afterTurnStage, persistStage } from "../../src/services/answer/stages/finish";
import { kbWithDocument, newChat } from "./chat-helpers";

/**
 * After-turn hooks may put their statements in the answer's final write (AfterTurnHook.finalWrite): one D1
 * batch with the answer (an agent run's end: A2A SendMessage one round trip shorter). A hook never fails the
 * answer: should the batch fail with its statements, the answer is written without them and the hook runs after.
 */
async function turnContext(hooks: AfterTurnHook[]) {
  const { kb, auth } = await kbWithDocument();
  const { chat } = await newChat(auth, kb);
  const ctx = {
    deps: { db: openDb(env), env, capabilities: { afterTurn: hooks, tools: [], context: [] } },
    req: { chat: { id: chat.id }, model: { id: "local-extractive" }, content: "Where is the warehouse?" },
    scope: {},
    ledger: { all: [] },
    contextMetadata: {},
    runner: { delegatedAgentIds: [], calls: [] },
    emit: async () => {},
  } as unknown as TurnContext;
  const answerId = `msg_${crypto.randomUUID().replace(/-/g, "")}`;
  const persist = () =>
    persistStage(ctx, answerId, { content: "In Leeds.", status: "complete" }, { usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, credits: 0 }, charge: [] }, new Date().toISOString());
  return { ctx, chat, answerId, persist };
}
const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0, credits: 0 };

describe("after-turn hooks in the answer's final write", () => {
  it("run in the same batch, after the answer, and settle with their results instead of running again", async () => {
    const run = vi.fn(async () => ({ done: { ran: true } }));
    const hook: AfterTurnHook = {
      name: "counter",
      finalWrite: (scope, end) => ({
        statements: [env.DB.prepare("SELECT count(*) AS n, ?2 AS id FROM messages WHERE id = ?1").bind(end.messageId, end.messageId)],
        settle: ([r]) => ({ done: { seen: r.results[0] } }),
      }),
      run,
    };
    const { ctx, answerId, persist } = await turnContext([hook]);
    const written = await persist();
    expect(written.assistant.id).toBe(answerId);
    expect(written.hooks.get(hook)).toEqual({ done: { seen: { n: 1, id: answerId } } });
    const extras = await afterTurnStage(ctx, { userMessage: written.assistant, assistantMessage: written.assistant, outcome: { content: "In Leeds.", status: "complete" }, usage }, written.hooks);
    expect(extras).toEqual({ seen: { n: 1, id: answerId } });
    expect(run).not.toHaveBeenCalled();
  });

  it("never fail the answer: a failing statement leaves the answer written without it, and the hook runs after", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const run = vi.fn(async () => ({ done: { ran: true } }));
    const hook: AfterTurnHook = {
      name: "broken",
      finalWrite: () => ({ statements: [env.DB.prepare("SELECT * FROM no_such_table")], settle: () => ({ done: { settled: true } }) }),
      run,
    };
    const { ctx, chat, answerId, persist } = await turnContext([hook]);
    const written = await persist();
    expect(written.hooks.size).toBe(0);
    const row = await env.DB.prepare("SELECT id FROM messages WHERE chat_id = ? AND role = 'assistant'").bind(chat.id).first("id");
    expect(row).toBe(answerId);
    const extras = await afterTurnStage(ctx, { userMessage: written.assistant, assistantMessage: written.assistant, outcome: { content: "In Leeds.", status: "complete" }, usage }, written.hooks);
    expect(extras).toEqual({ ran: true });
    expect(run).toHaveBeenCalledTimes(1);
  });
});

import { and, desc, eq, gte } from "drizzle-orm";
import type { TurnCommand, TurnOutcome } from "../../contracts/chat-session";
import type { Database } from "../../db/client";
import { messages, type AgentRun } from "../../db/schema";
import type { Env } from "../../env";
import { runTurnJson, streamTurn } from "../chats/session";
import { checkAfter, LEASE_MS } from "../recovery/leases";
import { wakeSupervisor } from "../recovery/supervisor";
import { endOfOutcome, failRun, finishRun, getRun, publicRun, type TurnEnd } from "./runs";

/**
 * Running a run: the command goes to the chat's Durable Object (runTurnJson /
 * streamTurn) like any chat turn. The run is finished by the after-turn hook
 * (./hook.ts) when the turn pipeline calls hooks; these functions finish it
 * too from what the turn returned (finishRun is idempotent), so a run always
 * ends in one terminal state.
 */

export async function executeRunJson(env: Env, db: Database, cmd: TurnCommand): Promise<{ outcome: TurnOutcome; run: AgentRun }> {
  await watchRun(env);
  let outcome: TurnOutcome;
  try {
    outcome = await runTurnJson(env, cmd);
  } catch (e) {
    await failRun(db, cmd.runId!, "internal_error", "The run could not be started");
    throw e;
  }
  // The turn's hook finished the run already (the outcome carries it as it ended); else finish it from the outcome.
  const run = outcome.run ?? (await finishRun(db, cmd.runId!, endOfOutcome(outcome)))!;
  return { outcome, run };
}

/** The run's lease (startRun) is looked at when it would lapse: a run whose worker dies before its turn starts is settled then. */
const watchRun = (env: Env) => wakeSupervisor(env, checkAfter(Date.now() + LEASE_MS));

/** Settles a run from its chat's latest answer (after a disconnect, or by the sweep). */
export async function settleFromChat(db: Database, run: AgentRun): Promise<void> {
  if (!run.chatId || !run.startedAt) return;
  const m = await db
    .select()
    .from(messages)
    .where(and(eq(messages.chatId, run.chatId), eq(messages.role, "assistant"), gte(messages.createdAt, run.startedAt)))
    .orderBy(desc(messages.seq))
    .get();
  if (!m) return;
  const md = (m.metadata ?? {}) as { usage?: TurnEnd["usage"]; error?: { code: string; message: string }; stop_reason?: TurnEnd["stopReason"] };
  await finishRun(db, run.id, {
    status: m.status,
    stopReason: md.stop_reason ?? (m.status === "partial" ? "disconnected" : undefined),
    error: md.error ?? null,
    usage: md.usage ?? null,
    messageId: m.id,
    content: m.content,
  });
}

const encoder = new TextEncoder();

/**
 * Streams a run: the chat events of the DO, with `run_id` on `user_message`
 * and the run on `done` (and on `error`). Events are parsed per SSE block.
 */
export async function executeRunStream(
  env: Env,
  db: Database,
  cmd: TurnCommand,
  waitUntil: (p: Promise<unknown>) => void,
): Promise<Response> {
  const runId = cmd.runId!;
  await watchRun(env);
  let res: Response;
  try {
    res = await streamTurn(env, cmd);
  } catch (e) {
    await failRun(db, runId, "internal_error", "The run could not be started");
    throw e;
  }
  if (!res.ok || !res.body) {
    await failRun(db, runId, "internal_error", "The run could not be started");
    return res;
  }
  const decoder = new TextDecoder();
  let buffer = "";
  let answer = "";
  let settled = false;

  const rewrite = async (block: string): Promise<string> => {
    if (!block.startsWith("data: ")) return block;
    let ev: Record<string, any>;
    try {
      ev = JSON.parse(block.slice(6));
    } catch {
      return block;
    }
    if (ev.type === "user_message") {
      ev.run_id = runId;
      if (ev.message) ev.message.run_id = runId;
    } else if (ev.type === "final_response") {
      answer = ev.isComplete ? ev.content : answer + (ev.content ?? "");
    } else if (ev.type === "done") {
      settled = true;
      if (!ev.run) {
        const run = await finishRun(db, runId, {
          status: ev.status,
          stopReason: ev.stop_reason,
          usage: ev.usage ?? null,
          messageId: ev.message_id ?? null,
          content: answer,
        });
        if (run) ev.run = publicRun(run);
      }
    } else if (ev.type === "error") {
      settled = true;
      const run = await finishRun(db, runId, {
        status: "error",
        error: { code: ev.code ?? "internal_error", message: ev.message ?? "The run failed" },
        usage: null,
        messageId: ev.message_id ?? null,
        content: answer,
      });
      ev.run_id = runId;
      if (run) ev.run = publicRun(run);
    }
    return `data: ${JSON.stringify(ev)}`;
  };

  const transform = new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      let i: number;
      while ((i = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        controller.enqueue(encoder.encode(`${await rewrite(block)}\n\n`));
      }
    },
    async flush(controller) {
      if (buffer) controller.enqueue(encoder.encode(await rewrite(buffer)));
      if (!settled) waitUntil(settleLater(db, runId));
    },
  });
  const body = res.body.pipeThrough(transform);
  const headers = new Headers(res.headers);
  headers.set("X-Run-Id", runId);
  return new Response(body, { status: res.status, headers });
}

/** A stream that ended without done/error (disconnect): settle from the saved partial answer. */
async function settleLater(db: Database, runId: string) {
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const run = await getRun(db, runId);
    if (!run || (run.status !== "running" && run.status !== "queued")) return;
    await settleFromChat(db, run);
  }
}

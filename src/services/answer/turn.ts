import type { Message } from "../../db/schema";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { publicMessage } from "../chats/chats";
import { checkAfter, LEASE_MS } from "../recovery/leases";
import { startTurnRecord } from "./turn-record";
import { wakeSupervisor } from "../recovery/supervisor";
import { AnswerCheckpoint } from "./checkpoint";
import { ProviderError } from "../models/llm";
import { assembleToolbox, type Toolbox } from "./toolbox";
import { TurnResources } from "../../contracts/resources";
import type { TurnScope } from "../../contracts/tools";
import { isLocal, publishSources, type TurnContext, type TurnDeps, type TurnRequest, type TurnResult } from "./context";
import { sanitizeCitations } from "./prompt";
import { SourceLedger } from "./sources";
import { afterTurnStage, closingEvents, meterStage, persistStage, type Outcome } from "./stages/finish";
import { generateStage } from "./stages/generate";
import { historyStage } from "./stages/history";
import { planStage } from "./stages/plan";
import { ToolRunner } from "./tool-runner";
import { TurnAbort, type Emit } from "../../contracts/turn";

export type { TurnDeps, TurnRequest, TurnResult } from "./context";

/**
 * THE answer pipeline, shared by JSON sends, streams, fast-query and agent
 * runs, as stages called in one order:
 *   user message → history (rolling summary) → toolbox → plan (context,
 *   knowledge-base search, web search; the offline plan's tools) → generation
 *   (local-extractive, or a provider model with the tool loop, its answer
 *   checkpointed as it streams) → metering → persistence → after-turn hooks
 *   → closing events.
 * A stage a turn does not need is skipped by its configuration (mode, model,
 * toolbox), never by a copy of the pipeline.
 */
export async function runTurn(deps: TurnDeps, req: TurnRequest, emit: Emit, signal: AbortSignal): Promise<TurnResult> {
  const scope = turnScope(deps, req);
  // The toolbox does not depend on the user message: assembled while it is written (it never rejects).
  const toolbox = assembleToolbox(scope, req.tools, deps.capabilities.tools);
  // The answer's id is known from the start: its checkpoints, the turn's lease and the final write share it.
  const assistantId = newId("msg");
  const record = await startTurnRecord(deps, req, assistantId);
  const announced = record.announced;
  scope.questionMessageId = announced.id;
  // The supervisor looks at the lease when it would lapse (it settles the turn if this worker is gone by then).
  const watched = wakeSupervisor(deps.env, checkAfter(Date.now() + LEASE_MS));
  await emit({ type: "user_message", message: publicMessage(announced), ...(req.runId ? { run_id: req.runId } : {}) });

  const ctx = createContext(deps, req, scope, await toolbox, emit, signal, record.written);
  const checkpoint = new AnswerCheckpoint(ctx, assistantId);
  const outcome = await answer(ctx, announced, checkpoint).finally(() => scope.resources?.closeAll());
  await checkpoint.close();

  const metered = meterStage(ctx, assistantId);
  // An announced user message may still be on its way (or waiting): the final write does not wait for it, it
  // appends it if absent (turn-record.ts).
  const [{ assistant: assistantMessage, appended, chat, hooks }] = await Promise.all([
    persistStage(ctx, assistantId, outcome, metered, nowIso(), record.toAppend()),
    ...ctx.offPath.map((settled) => settled()),
  ]);
  const userMessage = await record.settled(appended);
  const usage = metered.usage;
  await watched;
  const doneExtras = await afterTurnStage(ctx, { userMessage, assistantMessage, outcome, usage }, hooks);
  await closingEvents(ctx, assistantId, outcome, usage, doneExtras);
  return {
    userMessage,
    assistantMessage,
    usage,
    status: outcome.status,
    sources: ctx.ledger.all,
    stopReason: outcome.stopReason,
    error: outcome.error,
    transcript: ctx.transcript,
    chat,
  };
}

function turnScope(deps: TurnDeps, req: TurnRequest): TurnScope {
  const { chat, kb, actor, subject, mode, streaming, runId, depth, tabular, memorySettings, recalledAhead } = req;
  return { db: deps.db, env: deps.env, chat, kb, actor, subject, mode, streaming, runId, depth, tabular, memorySettings, recalledAhead, resources: new TurnResources() };
}

function createContext(deps: TurnDeps, req: TurnRequest, scope: TurnScope, toolbox: Toolbox, emit: Emit, signal: AbortSignal, userWritten: () => Promise<Message>): TurnContext {
  const ledger = new SourceLedger();
  return {
    deps,
    req,
    scope,
    emit,
    signal,
    toolbox,
    ledger,
    runner: new ToolRunner(scope, ledger, emit, signal),
    used: { input_tokens: 0, output_tokens: 0 },
    contextMetadata: {},
    publishedSources: -1,
    userWritten,
    offPath: [],
  };
}

/** History, plan and generation; failures and aborts become the outcome (the turn is still metered and saved). */
async function answer(ctx: TurnContext, userMessage: Parameters<typeof historyStage>[1], checkpoint: AnswerCheckpoint): Promise<Outcome> {
  let content = "";
  try {
    const history = await historyStage(ctx, userMessage);
    const { parts, finishTodo } = await planStage(ctx, history);
    await generateStage(ctx, history, parts, async (text) => {
      content += text;
      checkpoint.progress(content);
      await ctx.emit({ type: "final_response", content: text, isComplete: false });
    });
    content = sanitizeCitations(content, ctx.ledger.size);
    await publishSources(ctx);
    await ctx.emit({ type: "final_response", content, isComplete: true });
    if (finishTodo) await finishTodo();
    return { content, status: "complete" };
  } catch (e) {
    return failure(ctx, e, content);
  }
}

function failure(ctx: TurnContext, e: unknown, content: string): Outcome {
  const reason = ctx.signal.aborted ? ctx.signal.reason : e;
  const local = isLocal(ctx.req.model);
  let outcome: Outcome;
  if (reason instanceof TurnAbort) {
    outcome = { content, status: "partial", stopReason: reason.reason };
    // A stopped provider stream: charge what was generated so far.
    if (!local) ctx.used.output_tokens = Math.max(ctx.used.output_tokens, Math.ceil(content.length / 4));
  } else if (e instanceof ProviderError) {
    ctx.used.input_tokens += e.usage.input_tokens;
    ctx.used.output_tokens += e.usage.output_tokens;
    outcome = { content: e.partialText || content, status: "error", error: { code: "model_error", message: e.message, retryable: e.retryable } };
  } else {
    console.error(`turn failed in chat ${ctx.req.chat.id}:`, e);
    outcome = { content, status: "error", error: { code: "internal_error", message: "The answer could not be completed", retryable: true } };
  }
  if (local && ctx.used.output_tokens === 0) ctx.used.output_tokens = Math.ceil(content.length / 4);
  return outcome;
}

import type { AfterTurnHook, TurnScope } from "../../contracts/tools";
import { batchStatement } from "../../db/batch";
import type { AgentRun } from "../../db/schema";
import { finishRun, finishRunQueries, publicRun } from "./runs";

/**
 * Runs this isolate's hook finished in a JSON turn, until the chat's Durable Object takes them into the turn's
 * outcome (`takeFinishedRun`): the Worker that started the run then has it as it ended, without finishing it again.
 */
const finishedRuns = new Map<string, AgentRun>();

/** The run as its turn's hook left it (once; undefined when the hook did not finish it). */
export function takeFinishedRun(runId: string | null | undefined): AgentRun | undefined {
  if (!runId) return undefined;
  const run = finishedRuns.get(runId);
  finishedRuns.delete(runId);
  return run;
}

/**
 * Finishes an agent run when its turn ends (the toolbox loop calls it after the
 * answer is persisted, for complete, partial and failed turns): exactly one of
 * completed / failed (partial output, sources and usage kept) / cancelled, and
 * the run goes into the `done` event.
 */
export const agentRunHook: AfterTurnHook = {
  name: "agent-runs",
  // The run's end goes in the answer's final write: one batch, one round trip fewer (README "Latency").
  finalWrite(scope, end) {
    if (!scope.runId) return null;
    const runId = scope.runId;
    const { finish, logs, read } = finishRunQueries(scope.db, runId, end);
    const writes = [finish, ...logs].map((q) => batchStatement(scope.db, q).stmt);
    const back = batchStatement(scope.db, read);
    return {
      statements: [...writes, back.stmt],
      settle: (results) => finished(scope, runId, back.map(results[results.length - 1])[0]),
    };
  },
  async run(scope, turn) {
    if (!scope.runId) return;
    const run = await finishRun(scope.db, scope.runId, {
      status: turn.status,
      stopReason: turn.stopReason,
      error: turn.error ?? null,
      usage: turn.usage,
      messageId: turn.assistantMessage.id,
      content: turn.assistantMessage.content,
    });
    return finished(scope, scope.runId, run);
  },
};

/** The run as the turn left it: kept for the Worker that started it (a JSON turn), and in the `done` event. */
function finished(scope: TurnScope, runId: string, run: AgentRun | undefined) {
  if (run && !scope.streaming) finishedRuns.set(runId, run);
  return run ? { done: { run: publicRun(run) } } : undefined;
}

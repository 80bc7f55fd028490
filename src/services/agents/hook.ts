import type { AfterTurnHook } from "../../contracts/tools";
import type { AgentRun } from "../../db/schema";
import { finishRun, publicRun } from "./runs";

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
    if (run && !scope.streaming) finishedRuns.set(scope.runId, run);
    return run ? { done: { run: publicRun(run) } } : undefined;
  },
};

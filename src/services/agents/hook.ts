import type { AfterTurnHook } from "../../contracts/tools";
import { finishRun, publicRun } from "./runs";

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
    return run ? { done: { run: publicRun(run) } } : undefined;
  },
};

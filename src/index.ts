import { createApp } from "./app";
import { openDb } from "./db/client";
import type { Env } from "./env";
import { runHousekeeping } from "./services/housekeeping";
import { sweepSchedules } from "./services/agents/scheduler";
import { dispatchQueue } from "./services/queues";
// Modules that register queue consumers, housekeeping tasks and cleanup hooks.
import "./services/ingest/consumer";
import "./services/documents/cleanup";
import "./services/agents/cleanup";

export { LocalVectorIndex } from "./services/vector-index/local";

export { ChatSession } from "./durable/chat-session";

export { KbTables } from "./services/tables/store";

export { AgentScheduler } from "./durable/agent-scheduler";

const app = createApp();

export default {
  fetch: app.fetch,

  async queue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
    await dispatchQueue(batch, env, ctx);
  },

  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    const at = new Date(controller.scheduledTime);
    // "* * * * *": the agent-schedule safety net; any other cron (every 5 minutes): housekeeping.
    if (controller.cron === "* * * * *") {
      ctx.waitUntil(sweepSchedules(env, openDb(env), at, (p) => ctx.waitUntil(p)));
      return;
    }
    ctx.waitUntil(runHousekeeping(openDb(env), env, at));
  },
} satisfies ExportedHandler<Env>;

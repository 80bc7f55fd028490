import { createApp } from "./app";
import { createDb } from "./db/client";
import type { Env } from "./env";
import { runHousekeeping } from "./services/housekeeping";
import { dispatchQueue } from "./services/queues";
// Modules that register queue consumers, housekeeping tasks and cleanup hooks.
import "./services/ingest/consumer";
import "./services/documents/cleanup";

export { LocalVectorIndex } from "./services/vector-index/local";

export { ChatSession } from "./durable/chat-session";

export { KbTables } from "./services/tables/store";

const app = createApp();

export default {
  fetch: app.fetch,

  async queue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
    await dispatchQueue(batch, env, ctx);
  },

  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    ctx.waitUntil(runHousekeeping(createDb(env.DB), env, new Date(controller.scheduledTime)));
  },
} satisfies ExportedHandler<Env>;

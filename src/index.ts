import { createApp } from "./app";
import { CAPABILITIES } from "./capabilities";
import { jobContext } from "./contracts/context";
import { withSimulatedHops } from "./lib/distance";
import type { Env } from "./env";
import { runHousekeeping } from "./services/housekeeping";
import { sweepSchedules } from "./services/agents/scheduler";
import { dispatchQueue } from "./services/queues";
import { runSupervisorNow } from "./services/recovery/supervisor";
// Modules that register queue consumers, housekeeping tasks and cleanup hooks.
import "./services/ingest/consumer";
import "./services/documents/cleanup";
import "./services/documents/cleanup-tasks";
import "./services/agents/cleanup";
import "./services/mcp-oauth/lifecycle";
import { isForOAuthProvider, oauthProvider } from "./services/mcp-oauth/provider";
import { countRegistration, isRegistration, registrationRefusal } from "./services/mcp-oauth/registration-throttle";
import "./services/agents/recovery";
import "./services/chats/answer-record";

export { LocalVectorIndex } from "./services/vector-index/local";

export { ChatSession } from "./durable/chat-session";

export { KbTables } from "./services/tables/store";

export { AgentScheduler } from "./durable/agent-scheduler";

export { Supervisor } from "./durable/supervisor";

const app = createApp();

/** OAuth client registration, throttled per client address (src/services/mcp-oauth/registration-throttle.ts). */
async function register(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const refused = await registrationRefusal(request, env);
  if (refused) return refused;
  const res = await oauthProvider(env, app).fetch(request, env, ctx);
  ctx.waitUntil(countRegistration(request, env, res).catch((e) => console.error("could not count a client registration:", e)));
  return res;
}

export default {
  // The OAuth provider answers its own endpoints and OAuth tokens on /api/v1/mcp (then hands those to
  // the app); everything else, API keys on /api/v1/mcp included, goes to the app as it is.
  // Every entry takes the environment through withSimulatedHops: untouched unless a benchmark simulates distance.
  fetch(request: Request, rawEnv: Env, ctx: ExecutionContext): Response | Promise<Response> {
    const env = withSimulatedHops(rawEnv);
    if (isRegistration(request)) return register(request, env, ctx);
    return isForOAuthProvider(request) ? oauthProvider(env, app).fetch(request, env, ctx) : app.fetch(request, env, ctx);
  },

  async queue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
    await dispatchQueue(jobContext(withSimulatedHops(env), { capabilities: CAPABILITIES, waitUntil: (p) => ctx.waitUntil(p) }), batch);
  },

  async scheduled(controller: ScheduledController, rawEnv: Env, ctx: ExecutionContext): Promise<void> {
    const env = withSimulatedHops(rawEnv);
    const job = jobContext(env, { capabilities: CAPABILITIES, waitUntil: (p) => ctx.waitUntil(p) });
    const at = new Date(controller.scheduledTime);
    // Either cron: a recovery pass, in case the supervisor's alarm was lost (the alarm is the mechanism).
    ctx.waitUntil(runSupervisorNow(env).catch((e) => console.error("supervisor pass from the cron failed:", e)));
    // "* * * * *": the agent-schedule safety net; any other cron (every 5 minutes): housekeeping.
    if (controller.cron === "* * * * *") {
      job.waitUntil(sweepSchedules(job.env, job.db, at, job.waitUntil));
      return;
    }
    job.waitUntil(runHousekeeping(job.db, job.env, at));
  },
} satisfies ExportedHandler<Env>;

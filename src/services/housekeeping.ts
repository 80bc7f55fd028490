import type { Database } from "../db/client";
import type { Env } from "../env";
import { purgeExpiredSessions } from "./identity/sessions";
import { purgeThrottleEvents } from "./identity/throttle";
import { purgeExpiredEmbedTokens } from "./embed/tokens";
import { expireInvitations } from "./members";

type Task = (db: Database, env: Env, at: Date) => Promise<void>;

/** Periodic work run by the Cron Trigger; capabilities add their tasks here. */
const tasks: Array<[string, Task]> = [
  ["expire invitations", (db) => expireInvitations(db)],
  ["purge expired sessions", (db) => purgeExpiredSessions(db)],
  ["purge throttle records", (db) => purgeThrottleEvents(db)],
  ["purge expired embed tokens", (db, _env, at) => purgeExpiredEmbedTokens(db, at.getTime())],
];

export function registerHousekeeping(name: string, task: Task) {
  tasks.push([name, task]);
}

export async function runHousekeeping(db: Database, env: Env, at: Date): Promise<void> {
  // Each task runs even if another fails; failures are logged for the operator.
  const results = await Promise.allSettled(tasks.map(([, task]) => task(db, env, at)));
  results.forEach((r, i) => {
    if (r.status === "rejected") console.error(`housekeeping task '${tasks[i][0]}' failed:`, r.reason);
  });
}

import { openDb, type Database } from "../db/client";
import type { Env } from "../env";
import { checkedConfig, type Config } from "../lib/config";
import type { Caller } from "./caller";
import type { Capabilities } from "./tools";

/**
 * What a service is given to do its work: built once by each entry point (an HTTP request in the app's
 * middleware, a queue batch, an alarm, a cron run, a Durable Object call) and passed as the first argument.
 * Services never see the web framework: the database, the parsed configuration, the caller, the registered
 * capabilities and `waitUntil` are all here.
 */
export interface ServiceContext {
  /** The request's (or job's) database handle (src/db/client.ts `openDb`). */
  readonly db: Database;
  /** The Worker's bindings (configuration: read `config` instead). */
  readonly env: Env;
  /** The configuration, parsed and checked once (src/lib/config.ts). */
  readonly config: Config;
  /**
   * Who is asking. Authenticated HTTP requests always have one (the authentication middleware answers 401
   * itself otherwise); public routes use `optionalCaller(ctx)`; background work has none.
   */
  readonly caller: Caller;
  /** The capability registry (src/capabilities.ts), handed in by the entry point. */
  readonly capabilities: Capabilities;
  /** Keeps the isolate alive for work that finishes after the response. */
  waitUntil(promise: Promise<unknown>): void;
  readonly requestId: string | null;
}

/**
 * A context for work no request started (a queue batch, a cron run, an alarm): the database through
 * `openDb`, the configuration checked once (a bad value fails the job, naming it). There is no caller:
 * asking for one is a bug, and throws.
 */
export function jobContext(env: Env, parts: { capabilities: Capabilities; waitUntil: (promise: Promise<unknown>) => void }): ServiceContext {
  return {
    db: openDb(env),
    env,
    config: checkedConfig(env),
    get caller(): Caller {
      throw new Error("background work has no caller");
    },
    capabilities: parts.capabilities,
    waitUntil: parts.waitUntil,
    requestId: null,
  };
}

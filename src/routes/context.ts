import type { Context } from "hono";
import type { Caller } from "../contracts/caller";
import type { ServiceContext } from "../contracts/context";
import { checkedConfig } from "../lib/config";
import type { AppEnv } from "../types";

const built = new WeakMap<object, ServiceContext>();

/**
 * The request's ServiceContext, built once (on first use) from Hono's context: handlers pass it to services,
 * which never see Hono. `caller` reads what the authentication middleware set, so a context built before it
 * ran still names the caller.
 */
export function ctxOf(c: Context<AppEnv>): ServiceContext {
  let ctx = built.get(c);
  if (!ctx) {
    ctx = {
      db: c.get("db"),
      env: c.env,
      config: checkedConfig(c.env),
      get caller(): Caller {
        return c.get("caller");
      },
      capabilities: c.get("capabilities"),
      waitUntil: (promise) => c.executionCtx.waitUntil(promise),
      requestId: c.get("requestId") ?? null,
    };
    built.set(c, ctx);
  }
  return ctx;
}

import type { MiddlewareHandler } from "hono";
import { ApiError } from "../lib/errors";
import type { AppEnv } from "../types";
import { config } from "../lib/config";

/**
 * The window of the RATE_LIMITER binding in wrangler.toml (Cloudflare accepts
 * 10 or 60 seconds). The binding reports only allowed / refused, so a refused
 * caller is told to retry after one window.
 */
export const RATE_LIMIT_PERIOD_SECONDS = 10;

/**
 * Per-caller request throttling with the Workers Rate Limiting binding
 * (`[[ratelimits]]` RATE_LIMITER): each API key, embed token and signed-in user has its
 * own budget, independent of credits. Anonymous requests are not counted here
 * (signup and login have their own throttles). Counts are per Cloudflare
 * location and approximate, as the binding documents; `wrangler dev` and the
 * tests simulate the same binding. RATE_LIMITS=off turns it off (for example
 * behind a gateway that already limits). A limiter that fails lets the request
 * through: throttling must never take the API down.
 */
export const rateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const caller = c.get("caller");
  const limiter = c.env.RATE_LIMITER;
  if (!caller || !limiter || !config(c.env).rateLimits) return next();

  const key = caller.type === "user" ? `user:${caller.user.id}` : caller.embed ? `embed:${caller.embed.tokenId}` : `key:${caller.key.id}`;
  let allowed = true;
  try {
    allowed = (await limiter.limit({ key })).success;
  } catch (e) {
    console.error("rate limiter unavailable; request allowed:", e);
  }
  if (!allowed) {
    throw new ApiError(
      "rate_limited",
      `Too many requests for this ${caller.type === "user" ? "user" : caller.embed ? "embed token" : "API key"}; retry after ${RATE_LIMIT_PERIOD_SECONDS} seconds`,
      { headers: { "Retry-After": String(RATE_LIMIT_PERIOD_SECONDS) } },
    );
  }
  return next();
};

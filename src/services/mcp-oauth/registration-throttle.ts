import { openDb } from "../../db/client";
import type { Env } from "../../env";
import { config } from "../../lib/config";
import { ApiError } from "../../lib/errors";
import { clientAddress } from "../identity/sign-in";
import { assertNotThrottled, recordThrottleEvent } from "../identity/throttle";
import { OAUTH_ENDPOINTS } from "./provider";

/**
 * Dynamic client registration (RFC 7591, POST /oauth/register) is open to anyone, and each registration is stored:
 * registrations are throttled per client address, as signups are (OAUTH_REGISTER_THROTTLE_MAX per
 * OAUTH_REGISTER_THROTTLE_WINDOW_SECONDS, 20 an hour by default; 0 = unlimited). Only registrations that succeed
 * count. A refused one is 429 with `Retry-After` and an RFC 6749-style body (`temporarily_unavailable`), which
 * OAuth clients parse.
 */
export const isRegistration = (request: Request) => request.method === "POST" && new URL(request.url).pathname === OAUTH_ENDPOINTS.register;

/** Null when the registration may go on; otherwise the 429 to answer. */
export async function registrationRefusal(request: Request, env: Env): Promise<Response | null> {
  const cfg = config(env);
  try {
    await assertNotThrottled(openDb(env), "oauth_register", clientAddress(request), cfg.oauthRegisterThrottleMax, cfg.oauthRegisterThrottleWindowSeconds,
      "Too many client registrations from this address; try again later");
    return null;
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== "rate_limited") throw e;
    return Response.json(
      { error: "temporarily_unavailable", error_description: e.message },
      { status: 429, headers: { "Retry-After": e.headers?.["Retry-After"] ?? "60", "Cache-Control": "no-store" } },
    );
  }
}

/** After the provider answered a registration: a client it registered counts against the address. */
export async function countRegistration(request: Request, env: Env, response: Response): Promise<void> {
  if (response.status !== 201 || config(env).oauthRegisterThrottleMax <= 0) return;
  await recordThrottleEvent(openDb(env), "oauth_register", clientAddress(request));
}

import type { Caller } from "../../contracts/caller";
import type { Scope } from "../../contracts/scopes";
import type { Database } from "../../db/client";
import type { config } from "../../lib/config";

type Config = ReturnType<typeof config>;
import { listOrganizationsForUser } from "../organizations";
import { createSession } from "./sessions";
import { assertNotThrottled, clearThrottle, recentEvents, recordThrottleEvent } from "./throttle";
import { ApiError } from "../../lib/errors";
import { authenticateUser, createUser, normalizeEmail, publicUser } from "./users";

/** Who is signing in, for throttling and the session record. */
export interface ClientInfo {
  ip: string;
  userAgent?: string | null;
}

export const clientAddress = (req: Request) =>
  req.headers.get("CF-Connecting-IP") ?? req.headers.get("X-Forwarded-For")?.split(",")[0]?.trim() ?? "unknown";

/** Signup: throttled per client address; returns the new user and a session token. */
export async function signUp(db: Database, cfg: Config, body: { email: string; password: string; name?: string | null }, client: ClientInfo) {
  await assertNotThrottled(db, "signup", client.ip, cfg.signupThrottleMax, cfg.signupThrottleWindowSeconds,
    "Too many signups from this address; try again later");
  const user = await createUser(db, body, cfg.passwordIterations);
  await recordThrottleEvent(db, "signup", client.ip);
  const session = await createSession(db, user.id, client);
  return { user: publicUser(user), token: session.token };
}

/** Seconds between two attempts on an account under attack (failures from many clients). */
const ATTACK_PACE_SECONDS = 1;

/**
 * Login. Failures are counted per account and client address (API-DECISIONS "Wave 3"): a client
 * that failed too often for an account waits (429, Retry-After); other clients keep signing in, so
 * the right password is never locked out for everyone. An account failing from many clients at once
 * is under attack: its attempts are paced (one a second, 429 with Retry-After: 1 in between).
 */
export async function logIn(db: Database, cfg: Config, body: { email: string; password: string }, client: ClientInfo) {
  const account = normalizeEmail(body.email);
  const pair = `${account}|${client.ip}`;
  await assertNotThrottled(db, "login_failure", pair, cfg.loginThrottleMax, cfg.loginThrottleWindowSeconds,
    "Too many failed sign-in attempts for this email from this address; try again later");
  await assertAccountPaced(db, cfg, account);
  let user;
  try {
    user = await authenticateUser(db, body.email, body.password);
  } catch (e) {
    await Promise.all([recordThrottleEvent(db, "login_failure", pair), recordThrottleEvent(db, "login_failure", account)]);
    throw e;
  }
  await clearThrottle(db, "login_failure", pair);
  const session = await createSession(db, user.id, client);
  return { user: publicUser(user), token: session.token };
}

async function assertAccountPaced(db: Database, cfg: Config, account: string) {
  if (cfg.loginThrottleMax <= 0) return;
  const failures = await recentEvents(db, "login_failure", account, cfg.loginThrottleWindowSeconds);
  if (failures.count < cfg.loginThrottleMax || !failures.newest) return;
  const wait = Date.parse(failures.newest) + ATTACK_PACE_SECONDS * 1000 - Date.now();
  if (wait > 0) {
    throw new ApiError("rate_limited", "This account is receiving many failed sign-in attempts; try again in a moment", {
      headers: { "Retry-After": String(Math.ceil(wait / 1000)) },
    });
  }
}

/** GET /me: a user with their organizations, or an API key's own description. */
export async function describeCaller(db: Database, caller: Caller) {
  if (caller.type === "api_key") {
    const k = caller.key;
    return {
      type: "api_key" as const,
      api_key: {
        id: k.id,
        name: k.name,
        organization_id: k.organizationId,
        environment_id: k.environmentId,
        scopes: k.scopes as Scope[],
        tenant_ids: k.tenantIds,
        knowledge_base_id: k.knowledgeBaseId,
      },
    };
  }
  const orgs = await listOrganizationsForUser(db, caller.user.id);
  return {
    type: "user" as const,
    user: publicUser(caller.user),
    organizations: orgs.map((o) => ({ id: o.organization.id, name: o.organization.name, slug: o.organization.slug, role: o.role })),
  };
}

import type { Caller } from "../../auth/caller";
import type { Scope } from "../../auth/scopes";
import type { Database } from "../../db/client";
import type { config } from "../../lib/config";

type Config = ReturnType<typeof config>;
import { listOrganizationsForUser } from "../organizations";
import { createSession } from "./sessions";
import { assertNotThrottled, clearThrottle, recordThrottleEvent } from "./throttle";
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

/** Login: repeated failures for one email are throttled; returns the user and a session token. */
export async function logIn(db: Database, cfg: Config, body: { email: string; password: string }, client: ClientInfo) {
  const subject = normalizeEmail(body.email);
  await assertNotThrottled(db, "login_failure", subject, cfg.loginThrottleMax, cfg.loginThrottleWindowSeconds,
    "Too many failed sign-in attempts for this email; try again later");
  let user;
  try {
    user = await authenticateUser(db, body.email, body.password);
  } catch (e) {
    await recordThrottleEvent(db, "login_failure", subject);
    throw e;
  }
  await clearThrottle(db, "login_failure", subject);
  const session = await createSession(db, user.id, client);
  return { user: publicUser(user), token: session.token };
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

import { createRoute, z } from "@hono/zod-openapi";
import { requireCaller, requireUser } from "../../auth/authorize";
import { clearSessionCookie, setSessionCookie } from "../../auth/middleware";
import type { Scope } from "../../auth/scopes";
import { config } from "../../lib/config";
import { errorResponses, jsonBody, jsonContent, noContent, userOnly, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { createSession, revokeSession } from "../../services/identity/sessions";
import { assertNotThrottled, clearThrottle, recordThrottleEvent } from "../../services/identity/throttle";
import { authenticateUser, createUser, normalizeEmail, publicUser } from "../../services/identity/users";
import { listOrganizationsForUser } from "../../services/organizations";
import { LoginBody, MeSchema, SignupBody, UserSchema } from "./schemas";

const UserEnvelope = z.object({ user: UserSchema });

const signup = createRoute({
  method: "post",
  path: "/auth/signup",
  tags: ["Identity"],
  operationId: "signup",
  summary: "Create an account and sign in",
  description: "Creates a user and sets the `kb_session` cookie. Signups are throttled per client address.",
  request: { body: jsonBody(SignupBody) },
  responses: { 201: jsonContent(UserEnvelope, "The new user; the session cookie is set"), ...errorResponses },
});

const login = createRoute({
  method: "post",
  path: "/auth/login",
  tags: ["Identity"],
  operationId: "login",
  summary: "Sign in",
  description: "Sets the `kb_session` cookie. Repeated failures for one email are throttled (429).",
  request: { body: jsonBody(LoginBody) },
  responses: { 200: jsonContent(UserEnvelope, "Signed in; the session cookie is set"), ...errorResponses },
});

const logout = createRoute({
  method: "post",
  path: "/auth/logout",
  tags: ["Identity"],
  operationId: "logout",
  summary: "Sign out (revokes the session server-side)",
  security: userOnly,
  responses: { 204: noContent, ...errorResponses },
});

const me = createRoute({
  method: "get",
  path: "/me",
  tags: ["Identity"],
  operationId: "getMe",
  summary: "The current caller: a user with their organizations, or an API key",
  security: userOrKey,
  responses: { 200: jsonContent(MeSchema, "The caller"), ...errorResponses },
});

const clientAddress = (req: Request) =>
  req.headers.get("CF-Connecting-IP") ?? req.headers.get("X-Forwarded-For")?.split(",")[0]?.trim() ?? "unknown";

export const authRoutes = createRouter()
  .openapi(signup, async (c) => {
    const body = c.req.valid("json");
    const db = c.get("db");
    const cfg = config(c.env);
    const ip = clientAddress(c.req.raw);
    await assertNotThrottled(db, "signup", ip, cfg.signupThrottleMax, cfg.signupThrottleWindowSeconds,
      "Too many signups from this address; try again later");
    const user = await createUser(db, body, cfg.passwordIterations);
    await recordThrottleEvent(db, "signup", ip);
    const session = await createSession(db, user.id, { userAgent: c.req.header("User-Agent"), ip });
    setSessionCookie(c, session.token);
    return c.json({ user: publicUser(user) }, 201);
  })
  .openapi(login, async (c) => {
    const { email, password } = c.req.valid("json");
    const db = c.get("db");
    const cfg = config(c.env);
    const subject = normalizeEmail(email);
    await assertNotThrottled(db, "login_failure", subject, cfg.loginThrottleMax, cfg.loginThrottleWindowSeconds,
      "Too many failed sign-in attempts for this email; try again later");
    let user;
    try {
      user = await authenticateUser(db, email, password);
    } catch (e) {
      await recordThrottleEvent(db, "login_failure", subject);
      throw e;
    }
    await clearThrottle(db, "login_failure", subject);
    const session = await createSession(db, user.id, { userAgent: c.req.header("User-Agent"), ip: clientAddress(c.req.raw) });
    setSessionCookie(c, session.token);
    return c.json({ user: publicUser(user) }, 200);
  })
  .openapi(logout, async (c) => {
    const caller = requireUser(c);
    await revokeSession(c.get("db"), caller.sessionId);
    clearSessionCookie(c);
    return c.body(null, 204);
  })
  .openapi(me, async (c) => {
    const caller = requireCaller(c);
    if (caller.type === "api_key") {
      const k = caller.key;
      return c.json(
        {
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
        },
        200,
      );
    }
    const orgs = await listOrganizationsForUser(c.get("db"), caller.user.id);
    return c.json(
      {
        type: "user" as const,
        user: publicUser(caller.user),
        organizations: orgs.map((o) => ({
          id: o.organization.id,
          name: o.organization.name,
          slug: o.organization.slug,
          role: o.role,
        })),
      },
      200,
    );
  });

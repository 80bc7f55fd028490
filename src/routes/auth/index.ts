import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { requireUser } from "../../auth/authorize";
import { clearSessionCookie, setSessionCookie } from "../../auth/middleware";
import { config } from "../../lib/config";
import { errorResponses, jsonBody, jsonContent, noContent, userOnly, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { revokeSession } from "../../services/identity/sessions";
import { clientAddress, describeCaller, logIn, signUp } from "../../services/identity/sign-in";
import { LoginBody, MeSchema, SignupBody, UserSchema } from "./schemas";

const UserEnvelope = z.object({ user: UserSchema });

const client = (req: Request) => ({ ip: clientAddress(req), userAgent: req.headers.get("User-Agent") });

export const authRoutes = createRouter();

const signup = createRoute({
  method: "post",
  path: "/auth/signup",
  tags: ["Identity"],
  operationId: "signup",
  ...routePermission("public"),
  summary: "Create an account and sign in",
  description: "Creates a user and sets the `kb_session` cookie. Signups are throttled per client address.",
  request: { body: jsonBody(SignupBody) },
  responses: { 201: jsonContent(UserEnvelope, "The new user; the session cookie is set"), ...errorResponses },
});
authRoutes.openapi(signup, async (c) => {
  const { user, token } = await signUp(c.get("db"), config(c.env), c.req.valid("json"), client(c.req.raw));
  setSessionCookie(c, token);
  return c.json({ user }, 201);
});

const login = createRoute({
  method: "post",
  path: "/auth/login",
  tags: ["Identity"],
  operationId: "login",
  ...routePermission("public"),
  summary: "Sign in",
  description: "Sets the `kb_session` cookie. Repeated failures for one email are throttled (429).",
  request: { body: jsonBody(LoginBody) },
  responses: { 200: jsonContent(UserEnvelope, "Signed in; the session cookie is set"), ...errorResponses },
});
authRoutes.openapi(login, async (c) => {
  const { user, token } = await logIn(c.get("db"), config(c.env), c.req.valid("json"), client(c.req.raw));
  setSessionCookie(c, token);
  return c.json({ user }, 200);
});

const logout = createRoute({
  method: "post",
  path: "/auth/logout",
  tags: ["Identity"],
  operationId: "logout",
  ...routePermission("authenticated"),
  summary: "Sign out (revokes the session server-side)",
  security: userOnly,
  responses: { 204: noContent, ...errorResponses },
});
authRoutes.openapi(logout, async (c) => {
  const caller = requireUser(c);
  await revokeSession(c.get("db"), caller.sessionId);
  clearSessionCookie(c);
  return c.body(null, 204);
});

const me = createRoute({
  method: "get",
  path: "/me",
  tags: ["Identity"],
  operationId: "getMe",
  ...routePermission("authenticated"),
  summary: "The current caller: a user with their organizations, or an API key",
  security: userOrKey,
  responses: { 200: jsonContent(MeSchema, "The caller"), ...errorResponses },
});
authRoutes.openapi(me, async (c) => c.json(await describeCaller(c.get("db"), c.get("caller")), 200));

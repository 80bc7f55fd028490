import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { requireUser } from "../../auth/authorize";
import { clearSessionCookie, setSessionCookie } from "../../auth/middleware";
import { config } from "../../lib/config";
import { jsonBody, jsonContent, noContent, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { revokeSession } from "../../services/identity/sessions";
import { clientAddress, describeCaller, logIn, signUp } from "../../services/identity/sign-in";
import { LoginBody, MeSchema, SignupBody, UserSchema } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Identity"]);

const UserEnvelope = z.object({ user: UserSchema });

const client = (req: Request) => ({ ip: clientAddress(req), userAgent: req.headers.get("User-Agent") });

export const authRoutes = createRouter();

const signup = route("post", "/auth/signup", "public", {
  operationId: "signup", summary: "Create an account and sign in",
  description: "Creates a user and sets the `kb_session` cookie. Signups are throttled per client address.",
  request: { body: jsonBody(SignupBody) },
  responses: { 201: jsonContent(UserEnvelope, "The new user; the session cookie is set") },
});
authRoutes.openapi(signup, async (c) => {
  const { user, token } = await signUp(c.get("db"), config(c.env), c.req.valid("json"), client(c.req.raw));
  setSessionCookie(c, token);
  return c.json({ user }, 201);
});

const login = route("post", "/auth/login", "public", {
  operationId: "login", summary: "Sign in",
  description: "Sets the `kb_session` cookie. Repeated failures for one email are throttled (429).",
  request: { body: jsonBody(LoginBody) },
  responses: { 200: jsonContent(UserEnvelope, "Signed in; the session cookie is set") },
});
authRoutes.openapi(login, async (c) => {
  const { user, token } = await logIn(c.get("db"), config(c.env), c.req.valid("json"), client(c.req.raw));
  setSessionCookie(c, token);
  return c.json({ user }, 200);
});

const logout = route("post", "/auth/logout", "authenticated", {
  operationId: "logout", summary: "Sign out (revokes the session server-side)", responses: { 204: noContent },
  security: userOnly,
});
authRoutes.openapi(logout, async (c) => {
  const caller = requireUser(ctxOf(c));
  await revokeSession(c.get("db"), caller.sessionId);
  clearSessionCookie(c);
  return c.body(null, 204);
});

const me = route("get", "/me", "authenticated", {
  operationId: "getMe", summary: "The current caller: a user with their organizations, or an API key",
  responses: { 200: jsonContent(MeSchema, "The caller") },
});
authRoutes.openapi(me, async (c) => c.json(await describeCaller(c.get("db"), c.get("caller")), 200));

import { setCookie } from "hono/cookie";
import { ctxOf } from "../context";
import { optionalCaller } from "../../auth/authorize";
import { badRequest } from "../../lib/errors";
import { createRouter } from "../../lib/router";
import { openBrowserFlow } from "../../services/oauth-flows";
import { routesTagged } from "../define-route";

const route = routesTagged(["Connectors"]);

export const oauthFlowRoutes = createRouter();

const open = route("get", "/oauth-flows/{id}", "public", {
  operationId: "openOAuthFlow",
  summary: "Open a connect flow in this browser: binds the flow to it (cookie) and redirects to the provider",
  description:
    "The `redirect_url` of POST /connectors/add and the `authorization_url` of POST /mcp/servers/{id}/oauth/start point here. " +
    "The first browser to open it owns the flow (for a flow a signed-in user started: a browser signed in as that user): " +
    "it gets a short-lived `HttpOnly; Secure; SameSite=Lax` cookie, and the " +
    "callback completes only in that browser. A link opened a second time, or after 10 minutes → 400.",
  responses: { 302: { description: "To the provider's authorization page" } },
  security: [{}],
});
oauthFlowRoutes.openapi(open, async (c) => {
  const caller = optionalCaller(ctxOf(c));
  const opened = await openBrowserFlow(c.get("db"), c.req.valid("param").id, caller?.type === "user" ? caller.user.id : null);
  if ("refused" in opened) throw badRequest(opened.refused);
  const { name, value, maxAge, path } = opened.cookie;
  setCookie(c, name, value, { path, httpOnly: true, secure: true, sameSite: "Lax", maxAge });
  c.header("Cache-Control", "no-store");
  c.header("Referrer-Policy", "no-referrer");
  return c.redirect(opened.location, 302);
});

import {
  AuthorizationError,
  authorizationErrorRedirect,
  CimdFetchError,
  type AuthRequest,
  type OAuthHelpers,
} from "@cloudflare/workers-oauth-provider";
import { Hono, type Context } from "hono";
import { ctxOf } from "../context";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import type { UserCaller } from "../../contracts/caller";
import { setSessionCookie } from "../../auth/middleware";
import { config } from "../../lib/config";
import { ApiError } from "../../lib/errors";
import { resolveSession, SESSION_COOKIE } from "../../services/identity/sessions";
import { clientAddress, logIn } from "../../services/identity/sign-in";
import { checkPicked, consentChoices } from "../../services/mcp-oauth/consent";
import { MCP_OAUTH_SCOPE, newGrantId, recordGrant } from "../../services/mcp-oauth/grants";
import { OAUTH_ENDPOINTS, oauthHelpers, type McpOAuthProps } from "../../services/mcp-oauth/provider";
import type { AppEnv } from "../../types";
import { LoginBody } from "../auth/schemas";
import { CONSENT_HEADERS, consentPage, problemPage, signInPage } from "./consent-page";

/**
 * The authorization endpoint of the MCP endpoint's OAuth server (GET/POST /oauth/authorize): the
 * provider validated nothing yet when a browser arrives here, so the request is parsed first (bad
 * clients and redirect URIs are shown an error page, never redirected to). A member signs in with
 * the existing session cookie (or the sign-in form here, which comes back to this page), picks the
 * knowledge bases of one tenant, and allows or denies. The form is bound to this browser by the
 * provider's consent cookie; a POST without a session is refused.
 */

type Ctx = Context<AppEnv>;

export const oauthConsentRoutes = new Hono<AppEnv>();

/** The forms here are a few fields: anything larger is refused before it is read. */
const MAX_FORM_BYTES = 64 * 1024;
oauthConsentRoutes.post(
  OAUTH_ENDPOINTS.authorize,
  bodyLimit({ maxSize: MAX_FORM_BYTES, onError: (c) => html(c, problemPage("Request refused", "The form is too large."), 400) }),
);

const html = (c: Ctx, body: string, status: 200 | 400 | 401 | 403 | 429 = 200) => c.html(body, status, CONSENT_HEADERS);

/** The authorization request in the URL, or the response that ends here (an error page or a redirect to the client). */
async function parseRequest(c: Ctx, oauth: OAuthHelpers): Promise<AuthRequest | Response> {
  let req: AuthRequest;
  try {
    req = await oauth.parseAuthRequest(c.req.raw);
  } catch (e) {
    if (e instanceof AuthorizationError && e.redirectTo) return c.redirect(e.redirectTo, 302);
    if (e instanceof AuthorizationError) return html(c, problemPage("This app cannot be connected", e.description), 400);
    if (e instanceof CimdFetchError) return html(c, problemPage("This app cannot be connected", "This app could not be verified."), 400);
    throw e;
  }
  // OAuth 2.1: every client proves possession of the code with PKCE (S256 is the only method offered).
  if (!req.codeChallenge) return c.redirect(authorizationErrorRedirect(req, "invalid_request", "PKCE with S256 is required"), 302);
  return req;
}

async function signedInUser(c: Ctx): Promise<UserCaller | null> {
  const token = getCookie(c, SESSION_COOKIE);
  const session = token ? await resolveSession(c.get("db"), token) : null;
  if (!session) return null;
  if (session.refreshedExpiresAt) setSessionCookie(c, token!);
  return { type: "user", user: session.user, sessionId: session.sessionId };
}

/** Browsers send Origin with a form POST: it must be this service (a page elsewhere cannot post here with the session). */
function sameOrigin(c: Ctx): boolean {
  const origin = c.req.header("Origin");
  if (origin === undefined) return true;
  return origin === new URL(c.req.url).origin || origin === new URL(config(c.env).publicBaseUrl).origin;
}

async function showConsent(c: Ctx, oauth: OAuthHelpers, req: AuthRequest, user: UserCaller, retry?: { handle: string; error: string }) {
  const details = await oauth.describeConsent(req);
  const { tenants, truncated } = await consentChoices(c.get("db"), user.user.id);
  let handle = retry?.handle;
  if (!handle) {
    const tx = await oauth.beginConsent(req);
    for (const cookie of tx.headers.getSetCookie()) c.header("Set-Cookie", cookie, { append: true });
    handle = tx.handle;
  }
  return html(c, consentPage({ details, handle, email: user.user.email, tenants, truncated, error: retry?.error }), retry ? 400 : 200);
}

oauthConsentRoutes.get(OAUTH_ENDPOINTS.authorize, async (c) => {
  const oauth = oauthHelpers(c.env);
  const req = await parseRequest(c, oauth);
  if (req instanceof Response) return req;
  const user = await signedInUser(c);
  if (!user) return html(c, signInPage((await oauth.describeConsent(req)).clientName));
  return showConsent(c, oauth, req, user);
});

oauthConsentRoutes.post(OAUTH_ENDPOINTS.authorize, async (c) => {
  if (!sameOrigin(c)) return html(c, problemPage("Request refused", "This form can only be sent from this service's own page."), 403);
  const oauth = oauthHelpers(c.env);
  const req = await parseRequest(c, oauth);
  if (req instanceof Response) return req;
  const form = await c.req.raw.clone().formData().catch(() => null);
  if (!form) return html(c, problemPage("Request refused", "The form could not be read."), 400);
  if (form.get("intent") === "sign_in") return signIn(c, oauth, req, form);
  const user = await signedInUser(c);
  if (!user) return html(c, problemPage("Sign in first", "You are not signed in: open the app's link again and sign in."), 401);
  const handle = String(form.get("handle") ?? "");
  return form.get("decision") === "approve" ? approve(c, oauth, req, user, handle, form) : deny(c, oauth, handle);
});

/** The sign-in form of this page: the existing sign-in (throttled like POST /auth/login), then back to the page. */
async function signIn(c: Ctx, oauth: OAuthHelpers, req: AuthRequest, form: FormData) {
  const body = LoginBody.safeParse({ email: form.get("email"), password: form.get("password") });
  const email = typeof form.get("email") === "string" ? String(form.get("email")).slice(0, 254) : "";
  const clientName = (await oauth.describeConsent(req)).clientName;
  if (!body.success) return html(c, signInPage(clientName, { error: "Enter your email and password.", email }), 400);
  try {
    const client = { ip: clientAddress(c.req.raw), userAgent: c.req.header("User-Agent") };
    const { token } = await logIn(c.get("db"), config(c.env), body.data, client);
    setSessionCookie(c, token);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    for (const [k, v] of Object.entries(e.headers ?? {})) c.header(k, v);
    return html(c, signInPage(clientName, { error: e.message, email }), e.status === 429 ? 429 : 401);
  }
  return c.redirect(c.req.url, 303);
}

/** The provider's redirect back to the client (Location, the cleared consent cookie), keeping what this request set. */
function redirectWith(c: Ctx, headers: Headers) {
  headers.forEach((v, k) => {
    if (k.toLowerCase() !== "set-cookie") c.header(k, v);
  });
  for (const cookie of headers.getSetCookie()) c.header("Set-Cookie", cookie, { append: true });
  return c.body(null, 302);
}

async function deny(c: Ctx, oauth: OAuthHelpers, handle: string) {
  try {
    return redirectWith(c, (await oauth.denyConsent(c.req.raw, handle)).headers);
  } catch (e) {
    if (e instanceof AuthorizationError) return html(c, problemPage("This page has expired", e.description), 400);
    throw e;
  }
}

async function approve(c: Ctx, oauth: OAuthHelpers, req: AuthRequest, user: UserCaller, handle: string, form: FormData) {
  // The member's pick goes through the authorization layer as them (asking questions of each knowledge base).
  c.set("caller", user);
  let picked;
  try {
    picked = await checkPicked(ctxOf(c), form.getAll("knowledge_base_id").map(String));
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return showConsent(c, oauth, req, user, { handle, error: e.message });
  }
  let approved;
  try {
    approved = await oauth.approveConsent(c.req.raw, handle, { scope: [MCP_OAUTH_SCOPE] });
  } catch (e) {
    if (e instanceof AuthorizationError) return html(c, problemPage("This page has expired", e.description), 400);
    throw e;
  }
  const details = await oauth.describeConsent(approved.request);
  const grantId = newGrantId();
  const props: McpOAuthProps = { grant_id: grantId };
  const { redirectTo } = await oauth.completeAuthorization({
    request: approved.request,
    userId: user.user.id,
    metadata: { grant_id: grantId },
    scope: approved.request.scope,
    props,
  });
  // Recorded before the client gets its code: the code exchange checks this row.
  await recordGrant(c.get("db"), {
    id: grantId,
    userId: user.user.id,
    ...picked,
    clientId: approved.request.clientId,
    clientName: details.clientName.slice(0, 200),
    redirectHost: details.redirectHost.slice(0, 255),
    scopes: approved.request.scope,
  });
  approved.headers.set("Location", redirectTo);
  return redirectWith(c, approved.headers);
}

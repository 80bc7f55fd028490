import type { Env } from "../../env";
import { signingSecret } from "../../lib/config";
import { fromBase64Url, hmacSign, hmacVerify, randomToken, toBase64Url } from "../../lib/crypto";
import { providerFetch } from "./http";
import { ProviderError, type ClientCredentials, type ConnectorDefinition, type Endpoints, type TokenSet } from "./types";

/**
 * The OAuth 2 pieces every connector shares: the signed state, PKCE, the authorization URL, and the token
 * endpoint (code exchange and refresh), in each provider's own dialect (form or JSON body, client credentials
 * in the body or as HTTP Basic).
 */

export const STATE_TTL_SECONDS = 10 * 60;

/** What the signed state carries: owner, slug, the pending row (PKCE verifier reference) and final destination. */
export interface StatePayload {
  /** The pending authorization's id (connector_oauth_states row, which holds the sealed PKCE verifier). */
  n: string;
  /** Owner key: `user:<id>` or `ext:<tenant id>:<external subject>`. */
  o: string;
  s: string;
  /** Final destination. */
  r: string;
  /** Expiry, epoch seconds. */
  e: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const STATE_CONTEXT = "connector-oauth-state:v1:";

export async function signState(env: Env, payload: StatePayload): Promise<string> {
  const body = toBase64Url(enc.encode(JSON.stringify(payload)));
  return `${body}.${await hmacSign(signingSecret(env), STATE_CONTEXT + body)}`;
}

/** The payload of a state we signed, or the reason it is refused. */
export async function verifyState(env: Env, state: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<StatePayload | { refused: string }> {
  const [body, sig, ...rest] = state.split(".");
  if (!body || !sig || rest.length) return { refused: "malformed" };
  if (!(await hmacVerify(signingSecret(env), STATE_CONTEXT + body, sig))) return { refused: "bad signature" };
  let p: StatePayload;
  try {
    p = JSON.parse(dec.decode(fromBase64Url(body)));
  } catch {
    return { refused: "malformed" };
  }
  if (typeof p?.n !== "string" || typeof p.o !== "string" || typeof p.s !== "string" || typeof p.r !== "string" || typeof p.e !== "number") {
    return { refused: "malformed" };
  }
  if (p.e <= nowSeconds) return { refused: "expired" };
  return p;
}

export function newCodeVerifier(): string {
  return randomToken(48); // 64 base64url characters: within RFC 7636's 43-128
}

export async function codeChallenge(verifier: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(verifier))));
}

export async function authorizationUrl(
  def: ConnectorDefinition,
  endpoints: Endpoints,
  client: ClientCredentials,
  opts: { redirectUri: string; state: string; verifier: string | null },
): Promise<string> {
  const u = new URL(endpoints.authorize_url);
  u.searchParams.set("client_id", client.client_id);
  u.searchParams.set("redirect_uri", opts.redirectUri);
  u.searchParams.set("state", opts.state);
  if (def.scopes.length) u.searchParams.set(def.scopeParam, def.scopes.join(def.scopeSeparator));
  for (const [k, v] of Object.entries(def.authorizeParams ?? {})) u.searchParams.set(k, v);
  if (!u.searchParams.has("response_type")) u.searchParams.set("response_type", "code");
  if (opts.verifier) {
    u.searchParams.set("code_challenge", await codeChallenge(opts.verifier));
    u.searchParams.set("code_challenge_method", "S256");
  }
  return u.toString();
}

function defaultParse(json: Record<string, unknown>): TokenSet {
  const accessToken = json.access_token;
  if (typeof accessToken !== "string" || !accessToken) throw new ProviderError(400, "The token endpoint answered no access token", "invalid_grant");
  const expiresIn = typeof json.expires_in === "number" ? json.expires_in : typeof json.expires_in === "string" ? Number(json.expires_in) || null : null;
  return {
    accessToken,
    refreshToken: typeof json.refresh_token === "string" ? json.refresh_token : null,
    expiresIn,
    scope: typeof json.scope === "string" ? json.scope : null,
    raw: json,
  };
}

/** POSTs a grant to the token endpoint in the provider's dialect; ProviderError carries the OAuth error code. */
export async function tokenRequest(env: Env, def: ConnectorDefinition, endpoints: Endpoints, client: ClientCredentials, grant: Record<string, string>): Promise<TokenSet> {
  const params: Record<string, string> = { ...grant };
  const headers: Record<string, string> = { Accept: "application/json" };
  if (def.tokenAuth === "basic") headers.Authorization = `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`;
  else Object.assign(params, { client_id: client.client_id, client_secret: client.client_secret });
  let body: string;
  if (def.tokenEncoding === "json") {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(params);
  } else {
    headers["Content-Type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(params).toString();
  }
  const res = await providerFetch(env)(endpoints.token_url, { method: "POST", headers, body });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {
    // GitHub answers form encoding unless asked for JSON; accept it too.
    json = Object.fromEntries(new URLSearchParams(text));
  }
  if (!res.ok || typeof json.error === "string") {
    const code = typeof json.error === "string" ? json.error : `http_${res.status}`;
    const description = typeof json.error_description === "string" ? json.error_description : "";
    throw new ProviderError(res.ok ? 400 : res.status, `${code}${description ? `: ${description}` : ""}`.slice(0, 300), code);
  }
  return (def.parseToken ?? defaultParse)(json);
}

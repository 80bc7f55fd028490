import { and, eq } from "drizzle-orm";
import { createBrowserFlow } from "../oauth-flows";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Database } from "../../db/client";
import { mcpServers, type McpServer } from "../../db/schema";
import type { Env } from "../../env";
import { config, signingSecret } from "../../lib/config";
import { hmacSign, hmacVerify, randomToken, sha256Hex } from "../../lib/crypto";
import { ApiError } from "../../lib/errors";
import { decryptSecret, encryptSecret, openOptional } from "../../lib/secrets";
import { nowIso } from "../../lib/time";
import { mcpFetch } from "./guard";
import { getMcpServer, updateMcpServer } from "./servers";

/**
 * OAuth for MCP servers, per the MCP authorization specification: the SDK's
 * `auth()` does protected-resource metadata, authorization-server metadata,
 * dynamic client registration, PKCE S256 and the token requests; this file
 * keeps its state in D1 (secrets sealed with src/lib/secrets.ts) and adds what
 * a multi-user service needs on top:
 *  - a state that is HMAC-signed, names its registration, expires after 10
 *    minutes and is single use (its nonce is cleared by a compare-and-set);
 *  - ONE token refresh at a time per registration: a lease row updated by a
 *    compare-and-set, so concurrent turns never refresh twice (a reused refresh
 *    token makes many providers revoke the whole grant).
 */

export const STATE_TTL_MS = 10 * 60 * 1000;
/** Refresh this long before the access token expires. */
export const REFRESH_MARGIN_MS = 60 * 1000;
export const LEASE_MS = 30 * 1000;
const aad = (id: string) => `mcp_server:${id}`;

export const callbackUrl = (env: Env) => `${config(env).publicBaseUrl}/api/v1/mcp/servers/oauth/callback`;

/** The registration needs (re)authorization: the server refused, or the refresh was refused. */
export class McpAuthRequired extends Error {
  constructor(message = "The MCP server requires authorization; an administrator must connect it again (POST /mcp/servers/:id/oauth/start)") {
    super(message);
  }
}

type Mode = "start" | "callback" | "refresh";

/** The SDK's OAuthClientProvider over one mcp_servers row. */
export class StoredOAuthProvider implements OAuthClientProvider {
  authorizationUrl?: string;
  private client?: OAuthClientInformationMixed;
  private current?: OAuthTokens;

  constructor(
    private env: Env,
    private db: Database,
    private row: McpServer,
    private mode: Mode,
    private signedState?: string,
    private scope?: string,
  ) {}

  get redirectUrl() {
    return callbackUrl(this.env);
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "KB Chat Service",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(this.scope ? { scope: this.scope } : {}),
    };
  }

  state() {
    // Outside a start, nothing may begin a new authorization: a refused refresh ends in needs_auth.
    return this.signedState ?? "refresh-refused";
  }

  async clientInformation() {
    if (!this.client && this.row.oauthClientEnc) this.client = JSON.parse(await decryptSecret(this.env, this.row.oauthClientEnc, aad(this.row.id)));
    return this.client;
  }

  async saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
    await updateMcpServer(this.db, this.row.id, { oauthClientEnc: await encryptSecret(this.env, JSON.stringify(info), aad(this.row.id)) });
  }

  async tokens() {
    if (this.mode === "start") return undefined; // a start always asks the user again
    if (!this.current && this.row.oauthTokensEnc) this.current = JSON.parse(await decryptSecret(this.env, this.row.oauthTokensEnc, aad(this.row.id)));
    return this.current;
  }

  async saveTokens(tokens: OAuthTokens) {
    // Some servers do not rotate refresh tokens: keep the old one when none is returned.
    const previous = this.mode === "refresh" ? await this.tokens() : undefined;
    const merged = { ...tokens, refresh_token: tokens.refresh_token ?? previous?.refresh_token };
    this.current = merged;
    const expiresAt = typeof tokens.expires_in === "number" ? Date.now() + tokens.expires_in * 1000 : null;
    await this.db
      .update(mcpServers)
      .set({
        oauthTokensEnc: await encryptSecret(this.env, JSON.stringify(merged), aad(this.row.id)),
        oauthTokenExpiresAt: expiresAt,
        oauthTokenVersion: this.row.oauthTokenVersion + 1,
        auth: "oauth",
        updatedAt: nowIso(),
      })
      .where(eq(mcpServers.id, this.row.id));
  }

  redirectToAuthorization(url: URL) {
    // A Worker does not redirect anyone: the start route hands the URL back.
    this.authorizationUrl = url.toString();
  }

  async saveCodeVerifier(verifier: string) {
    if (this.mode !== "start") return;
    await updateMcpServer(this.db, this.row.id, { oauthVerifierEnc: await encryptSecret(this.env, verifier, aad(this.row.id)) });
  }

  async codeVerifier() {
    const v = await openOptional(this.env, this.row.oauthVerifierEnc, aad(this.row.id));
    if (!v) throw new Error("No authorization is pending for this server");
    return v;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    const set: Partial<McpServer> = {};
    if (scope === "all" || scope === "client") set.oauthClientEnc = null;
    if (scope === "all" || scope === "tokens") set.oauthTokensEnc = null;
    if (scope === "all" || scope === "verifier") set.oauthVerifierEnc = null;
    if (scope === "all" || scope === "discovery") set.oauthDiscovery = null;
    if (set.oauthClientEnc === null) this.client = undefined;
    if (set.oauthTokensEnc === null) this.current = undefined;
    await updateMcpServer(this.db, this.row.id, set);
  }

  async saveDiscoveryState(state: OAuthDiscoveryState) {
    this.row = { ...this.row, oauthDiscovery: state as unknown as Record<string, unknown> };
    await updateMcpServer(this.db, this.row.id, { oauthDiscovery: state as unknown as Record<string, unknown> });
  }

  discoveryState() {
    return (this.row.oauthDiscovery ?? undefined) as OAuthDiscoveryState | undefined;
  }
}

// ---- State ------------------------------------------------------------------

const stateMessage = (serverId: string, nonce: string, exp: number) => `mcp-oauth-state:${serverId}:${nonce}:${exp}`;

async function newState(env: Env, serverId: string): Promise<{ state: string; nonce: string }> {
  const nonce = randomToken(16);
  const exp = Date.now() + STATE_TTL_MS;
  const sig = await hmacSign(signingSecret(env), stateMessage(serverId, nonce, exp));
  return { state: `${serverId}.${nonce}.${exp}.${sig}`, nonce };
}

/**
 * Checks a callback's state and consumes it: signature, expiry, and the pending
 * nonce of its registration, cleared by a compare-and-set so that a second use
 * (a replay, or two tabs) is refused. Returns the registration id.
 */
export async function consumeState(env: Env, db: Database, state: string): Promise<{ serverId: string } | { error: string }> {
  const parts = state.split(".");
  if (parts.length !== 4) return { error: "The authorization state is malformed." };
  const [serverId, nonce, expRaw, sig] = parts;
  const exp = Number(expRaw);
  if (!Number.isFinite(exp) || !(await hmacVerify(signingSecret(env), stateMessage(serverId, nonce, exp), sig))) {
    return { error: "The authorization state is not valid." };
  }
  if (Date.now() > exp) return { error: "The authorization took longer than 10 minutes; start it again." };
  const res = await db
    .update(mcpServers)
    .set({ oauthStateNonce: null })
    .where(and(eq(mcpServers.id, serverId), eq(mcpServers.oauthStateNonce, await sha256Hex(nonce))))
    .run();
  if (!res.meta.changes) return { error: "This authorization was already used or replaced by a newer one; start it again." };
  return { serverId };
}

// ---- Start and callback ------------------------------------------------------

/** Begins an authorization for a registration: the URL (on our origin) the signed-in administrator's browser opens. */
export async function startAuthorization(env: Env, db: Database, row: McpServer, startedBy: string, scope?: string): Promise<string> {
  if (row.auth === "credentials") throw new ApiError("conflict", "This server is registered with credentials; register it again without them to use OAuth");
  if (row.auth === "none" && row.status === "ready") throw new ApiError("conflict", "This server did not ask for an authorization");
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  const { state, nonce } = await newState(env, row.id);
  await updateMcpServer(db, row.id, { oauthStateNonce: await sha256Hex(nonce), oauthScope: scope ?? null });
  const fresh = (await getMcpServer(db, row.id))!;
  const provider = new StoredOAuthProvider(env, db, { ...fresh, oauthDiscovery: null }, "start", state, scope);
  let result: string;
  try {
    result = await auth(provider, {
      serverUrl: row.url,
      scope,
      resourceMetadataUrl: row.oauthResourceMetadataUrl ? new URL(row.oauthResourceMetadataUrl) : undefined,
      fetchFn: mcpFetch(env),
    });
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError("fetch_failed", `The server's authorization could not be started: ${safeMessage(e)}`);
  }
  if (result !== "REDIRECT" || !provider.authorizationUrl) {
    throw new ApiError("conflict", "The server did not ask for an authorization");
  }
  // The browser opens a URL on our own origin first, which binds the flow to it (src/services/oauth-flows.ts).
  return createBrowserFlow(env, db, { kind: "mcp", state, authorizeUrl: provider.authorizationUrl, userId: startedBy });
}

/** Exchanges the code of a callback (after `consumeState`); tokens are sealed into the row. */
export async function finishAuthorization(env: Env, db: Database, serverId: string, code: string): Promise<McpServer> {
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  const row = (await getMcpServer(db, serverId))!;
  const provider = new StoredOAuthProvider(env, db, row, "callback", undefined, row.oauthScope ?? undefined);
  const result = await auth(provider, {
    serverUrl: row.url,
    authorizationCode: code,
    scope: row.oauthScope ?? undefined,
    fetchFn: mcpFetch(env),
  });
  if (result !== "AUTHORIZED") throw new Error("The authorization server did not issue tokens");
  await updateMcpServer(db, serverId, { oauthVerifierEnc: null, auth: "oauth" });
  return (await getMcpServer(db, serverId))!;
}

// ---- Access tokens and the one-refresh-at-a-time lease ------------------------

export async function accessTokenOf(env: Env, row: McpServer): Promise<OAuthTokens | null> {
  const raw = await openOptional(env, row.oauthTokensEnc, aad(row.id));
  return raw ? (JSON.parse(raw) as OAuthTokens) : null;
}

/** An error message fit for status fields and tool results: no URLs' query strings, no tokens. */
export function safeMessage(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/(access_token|refresh_token|code|client_secret|Bearer)\s*[=:]\s*\S+/gi, "$1=[redacted]").slice(0, 500);
}

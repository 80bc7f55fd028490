import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { expect } from "vitest";
import { API, BASE, fetchWorker } from "../helpers";

/**
 * The MCP SDK's own OAuth client (auth() + StreamableHTTPClientTransport) against the Worker, through
 * exports.default.fetch on http://localhost:8787 (= PUBLIC_BASE_URL, the origin the tokens are bound to).
 * The "browser" part (consent page, form post) is done with plain requests carrying the cookies.
 */

export const MCP_URL = `${API}/mcp`;
export const REDIRECT_URI = "http://localhost:9876/callback";
export const workerFetch = (input: string | URL | Request, init?: RequestInit) => fetchWorker(new Request(input as RequestInfo, init));

/** An in-memory OAuthClientProvider, as an MCP client application keeps one. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  constructor(private readonly name = "Test MCP client") {}
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Set-Cookie values of a response as one Cookie header value (name=value pairs). */
export const cookiesOf = (r: Response) => r.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");

/** The consent page for the provider's authorization URL, as the signed-in member's browser gets it. */
export async function openConsent(p: MemoryOAuthProvider, memberCookie: string | null) {
  const res = await fetchWorker(p.authorizationUrl!.toString(), { headers: memberCookie ? { Cookie: memberCookie } : {} });
  const html = await res.text();
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1] ?? null;
  return { res, html, handle, consentCookie: cookiesOf(res) };
}

/** Posts the consent form (same URL, form-encoded, with the member's and the consent cookies). */
export async function postConsent(
  p: MemoryOAuthProvider,
  cookies: string,
  fields: { handle: string | null; decision: "approve" | "deny"; knowledgeBaseIds?: string[] },
) {
  const form = new URLSearchParams({ handle: fields.handle ?? "", decision: fields.decision });
  for (const id of fields.knowledgeBaseIds ?? []) form.append("knowledge_base_id", id);
  return fetchWorker(p.authorizationUrl!.toString(), {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookies, Origin: BASE },
    body: form,
    redirect: "manual",
  });
}

/**
 * The whole flow: discovery + dynamic registration (auth() → REDIRECT), the consent page as the member,
 * Allow with the picked knowledge bases, then auth() with the code → AUTHORIZED. Returns the provider with tokens.
 */
export async function connectByOAuth(memberCookie: string, knowledgeBaseIds: string[], name?: string | MemoryOAuthProvider) {
  // An existing provider (the same registered client) authorizes again from scratch.
  const p = name instanceof MemoryOAuthProvider ? name : new MemoryOAuthProvider(name);
  p.saved = undefined;
  expect(await auth(p, { serverUrl: MCP_URL, fetchFn: workerFetch })).toBe("REDIRECT");
  const consent = await openConsent(p, memberCookie);
  expect(consent.res.status, consent.html).toBe(200);
  const approved = await postConsent(p, `${memberCookie}; ${consent.consentCookie}`, { handle: consent.handle, decision: "approve", knowledgeBaseIds });
  expect(approved.status, await approved.clone().text()).toBe(302);
  const back = new URL(approved.headers.get("Location")!);
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
  expect(back.searchParams.get("state")).toBe(p.authorizationUrl!.searchParams.get("state"));
  const code = back.searchParams.get("code")!;
  expect(await auth(p, { serverUrl: MCP_URL, authorizationCode: code, fetchFn: workerFetch })).toBe("AUTHORIZED");
  return p;
}

/** The SDK client connected with the provider's tokens (the transport refreshes and re-authorizes through it). */
export async function oauthClient(p: MemoryOAuthProvider) {
  const client = new Client({ name: "oauth-test-client", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: p, fetch: workerFetch }));
  return client;
}

/** A raw tools/call with a bearer token (to see the HTTP status the SDK would hide). */
export function rawToolsList(token: string) {
  return fetchWorker(MCP_URL, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
}

export const textOf = (r: any) => (r.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");

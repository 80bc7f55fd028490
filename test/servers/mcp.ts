import { createHash, randomBytes } from "node:crypto";
import type http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import type { Handler } from "./index";

/**
 * Real MCP servers for the tests (the SDK's McpServer), on one port:
 *  - /open/mcp                 Streamable HTTP, no auth (tools echo, add, fail, whoami);
 *  - /cred/mcp                 the same behind a static bearer credential (CRED_SECRET);
 *  - /legacy/sse + /legacy/messages   the older HTTP+SSE transport only (POST /legacy/sse → 405);
 *  - /r/<realm>/mcp            behind a tiny OAuth 2.1 authorization server of its own realm
 *                              (so test files do not share state): protected-resource metadata (RFC 9728),
 *                              authorization-server metadata (RFC 8414), dynamic client registration (RFC 7591),
 *                              /authorize (auto-approve, S256 only), /token (PKCE check, RFC 8707 resource,
 *                              refresh with rotation; a reused refresh token revokes the whole grant, as
 *                              real providers do), and /r/<realm>/admin/{stats,revoke-access,config}.
 *  - /redirect-private/mcp     answers every request with a redirect to a private address.
 *  - /count/<name>/mcp         like /open/mcp, counting the JSON-RPC methods it receives (GET /count/<name>/stats).
 */

export const CRED_SECRET = "cred-OK-123";

interface Realm {
  clients: Map<string, { redirect_uris: string[] }>;
  codes: Map<string, { clientId: string; redirectUri: string; challenge: string; resource: string | null; user: string }>;
  access: Map<string, { user: string; exp: number }>;
  refresh: Map<string, { user: string; clientId: string; used: boolean; grant: string }>;
  revokedGrants: Set<string>;
  stats: { registrations: number; authorizations: number; codeExchanges: number; refreshes: number; refreshReuse: number; lastAuthorize: Record<string, string> | null; lastTokenRequest: Record<string, string> | null; issued: string[] };
  config: { expires_in: number; refuse_refresh: boolean };
}

const realms = new Map<string, Realm>();
function realm(name: string): Realm {
  let r = realms.get(name);
  if (!r) {
    r = {
      clients: new Map(),
      codes: new Map(),
      access: new Map(),
      refresh: new Map(),
      revokedGrants: new Set(),
      stats: { registrations: 0, authorizations: 0, codeExchanges: 0, refreshes: 0, refreshReuse: 0, lastAuthorize: null, lastTokenRequest: null, issued: [] },
      config: { expires_in: 3600, refuse_refresh: false },
    };
    realms.set(name, r);
  }
  return r;
}

const token = () => randomBytes(24).toString("base64url");

function buildServer(user: string) {
  const server = new McpServer({ name: "test-tools", version: "1.0.0" });
  server.registerTool("echo", { description: "Echo the text back", inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text: `echo: ${text}` }],
  }));
  server.registerTool("add", { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  server.registerTool("fail", { description: "Always fails", inputSchema: {} }, async () => ({
    content: [{ type: "text", text: "something broke on the tool side" }],
    isError: true,
  }));
  server.registerTool("whoami", { description: "The user bound to the token", inputSchema: {} }, async () => ({
    content: [{ type: "text", text: `hello, ${user}` }],
  }));
  return server;
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

const methodCounts = new Map<string, Record<string, number>>();

async function serveStreamable(req: http.IncomingMessage, res: http.ServerResponse, user: string, counts?: Record<string, number>) {
  if (req.method !== "POST") return json(res, 405, { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed" }, id: null }, { Allow: "POST" });
  const raw = await readBody(req);
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return json(res, 400, { jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null });
  }
  if (counts) for (const m of [body].flat() as Array<{ method?: string }>) if (m?.method) counts[m.method] = (counts[m.method] ?? 0) + 1;
  const server = buildServer(user);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const legacy = new Map<string, SSEServerTransport>();

export const handler: Handler = async (req, res, self) => {
  const url = new URL(req.url ?? "/", self.url);
  const path = url.pathname;

  if (path === "/open/mcp") return serveStreamable(req, res, "anonymous");

  const counted = /^\/count\/([^/]+)\/(mcp|stats)$/.exec(path);
  if (counted) {
    const counts = methodCounts.get(counted[1]) ?? {};
    methodCounts.set(counted[1], counts);
    return counted[2] === "stats" ? json(res, 200, counts) : serveStreamable(req, res, "anonymous", counts);
  }

  if (path === "/cred/mcp") {
    if (req.headers.authorization !== `Bearer ${CRED_SECRET}`) {
      return json(res, 401, { error: "invalid_token" }, { "WWW-Authenticate": 'Bearer error="invalid_token"' });
    }
    return serveStreamable(req, res, "credential-holder");
  }

  if (path.startsWith("/redirect-private/")) {
    res.writeHead(307, { Location: "http://10.0.0.1/mcp" });
    res.end();
    return;
  }

  if (path === "/legacy/sse") {
    if (req.method !== "GET") return json(res, 405, { error: "method_not_allowed" });
    const transport = new SSEServerTransport("/legacy/messages", res);
    legacy.set(transport.sessionId, transport);
    res.on("close", () => legacy.delete(transport.sessionId));
    await buildServer("legacy").connect(transport);
    return;
  }
  if (path === "/legacy/messages" && req.method === "POST") {
    const t = legacy.get(url.searchParams.get("sessionId") ?? "");
    if (!t) return json(res, 404, { error: "no session" });
    return t.handlePostMessage(req, res, JSON.parse(await readBody(req)));
  }

  // ---- OAuth realms --------------------------------------------------------
  let m = /^\/\.well-known\/oauth-protected-resource\/r\/([^/]+)\/mcp$/.exec(path);
  if (m) {
    return json(res, 200, { resource: `${self.url}/r/${m[1]}/mcp`, authorization_servers: [`${self.url}/r/${m[1]}`], scopes_supported: ["tools.read"] });
  }
  m = /^\/\.well-known\/oauth-authorization-server\/r\/([^/]+)$/.exec(path);
  if (m) {
    const iss = `${self.url}/r/${m[1]}`;
    return json(res, 200, {
      issuer: iss,
      authorization_endpoint: `${iss}/authorize`,
      token_endpoint: `${iss}/token`,
      registration_endpoint: `${iss}/register`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
    });
  }
  m = /^\/r\/([^/]+)\/(.+)$/.exec(path);
  if (!m) return json(res, 404, { error: "not_found" });
  const name = m[1];
  const r = realm(name);
  const rest = m[2];
  const resource = `${self.url}/r/${name}/mcp`;

  if (rest === "mcp") {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const grant = bearer ? r.access.get(bearer) : undefined;
    if (!grant || grant.exp < Date.now()) {
      return json(res, 401, { error: "invalid_token" }, {
        "WWW-Authenticate": `Bearer error="invalid_token", resource_metadata="${self.url}/.well-known/oauth-protected-resource/r/${name}/mcp"`,
      });
    }
    return serveStreamable(req, res, grant.user);
  }
  if (rest === "register" && req.method === "POST") {
    const meta = JSON.parse(await readBody(req));
    if (!Array.isArray(meta.redirect_uris) || !meta.redirect_uris.length) return json(res, 400, { error: "invalid_redirect_uri" });
    const clientId = `client-${token()}`;
    r.clients.set(clientId, { redirect_uris: meta.redirect_uris });
    r.stats.registrations++;
    return json(res, 201, { ...meta, client_id: clientId, client_id_issued_at: Math.floor(Date.now() / 1000) });
  }
  if (rest === "authorize" && req.method === "GET") {
    const q = Object.fromEntries(url.searchParams);
    r.stats.lastAuthorize = q;
    const client = r.clients.get(q.client_id ?? "");
    if (!client || !client.redirect_uris.includes(q.redirect_uri)) return json(res, 400, { error: "invalid_client" });
    const back = new URL(q.redirect_uri);
    if (q.response_type !== "code" || q.code_challenge_method !== "S256" || !q.code_challenge) {
      back.searchParams.set("error", "invalid_request");
    } else {
      const code = token();
      r.codes.set(code, { clientId: q.client_id, redirectUri: q.redirect_uri, challenge: q.code_challenge, resource: q.resource ?? null, user: "alice" });
      r.stats.authorizations++;
      back.searchParams.set("code", code);
    }
    if (q.state) back.searchParams.set("state", q.state);
    res.writeHead(302, { Location: back.toString() });
    res.end();
    return;
  }
  if (rest === "token" && req.method === "POST") {
    const p = Object.fromEntries(new URLSearchParams(await readBody(req)));
    r.stats.lastTokenRequest = { ...p, code: p.code ? "[set]" : "", code_verifier: p.code_verifier ? "[set]" : "", refresh_token: p.refresh_token ? "[set]" : "" };
    if (p.resource && p.resource !== resource) return json(res, 400, { error: "invalid_target" });
    let user: string;
    let grantId: string;
    if (p.grant_type === "authorization_code") {
      const code = r.codes.get(p.code ?? "");
      r.codes.delete(p.code ?? "");
      if (!code || code.clientId !== p.client_id || code.redirectUri !== p.redirect_uri) return json(res, 400, { error: "invalid_grant" });
      const challenge = createHash("sha256").update(p.code_verifier ?? "").digest("base64url");
      if (challenge !== code.challenge) return json(res, 400, { error: "invalid_grant", error_description: "PKCE verification failed" });
      r.stats.codeExchanges++;
      user = code.user;
      grantId = token();
    } else if (p.grant_type === "refresh_token") {
      const rt = r.refresh.get(p.refresh_token ?? "");
      if (!rt || r.revokedGrants.has(rt.grant) || rt.clientId !== p.client_id) return json(res, 400, { error: "invalid_grant" });
      if (rt.used) {
        // A refresh token used twice: revoke the whole grant (what many providers do).
        r.stats.refreshReuse++;
        r.revokedGrants.add(rt.grant);
        for (const [k, v] of r.access) if (v.user === rt.user) r.access.delete(k);
        return json(res, 400, { error: "invalid_grant", error_description: "refresh token reused; grant revoked" });
      }
      if (r.config.refuse_refresh) return json(res, 400, { error: "invalid_grant" });
      rt.used = true;
      r.stats.refreshes++;
      user = rt.user;
      grantId = rt.grant;
    } else {
      return json(res, 400, { error: "unsupported_grant_type" });
    }
    const access = token();
    const refresh = token();
    r.access.set(access, { user, exp: Date.now() + r.config.expires_in * 1000 });
    r.refresh.set(refresh, { user, clientId: p.client_id, used: false, grant: grantId });
    r.stats.issued.push(access, refresh); // so tests can prove no token is ever stored or answered in clear
    return json(res, 200, { access_token: access, token_type: "Bearer", expires_in: r.config.expires_in, refresh_token: refresh, scope: "tools.read" });
  }
  if (rest === "admin/stats") return json(res, 200, r.stats);
  if (rest === "admin/revoke-access" && req.method === "POST") {
    r.access.clear();
    return json(res, 200, { ok: true });
  }
  if (rest === "admin/config" && req.method === "POST") {
    Object.assign(r.config, JSON.parse(await readBody(req)));
    return json(res, 200, r.config);
  }
  return json(res, 404, { error: "not_found" });
};

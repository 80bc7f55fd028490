import { createHash, randomBytes } from "node:crypto";
import type http from "node:http";
import type { Handler } from "./index";

/**
 * A local stand-in for the six connectors' providers (GitHub, Google Drive, Notion, Slack, Linear, Jira):
 * for each, the subset of its OAuth 2 dialect our code uses (authorize auto-approving with a redirect that
 * carries code + state; token exchange checking the client credentials, redirect_uri and PKCE; refresh with
 * rotation; revocation) and of its REST/GraphQL API our tools call, over per-account fixture data.
 * Everything lives under /<slug>/oauth/... and /<slug>/api/... (test/vitest.config.ts points CONNECTOR_ENDPOINTS
 * here). Test knobs on the authorize URL: test_account (alice|bob), test_expires_in (seconds),
 * test_refresh_error (revoked|expired|scope), test_deny=1. GET /_control/log shows refreshes and revocations.
 */

export const CLIENTS: Record<string, { client_id: string; client_secret: string }> = Object.fromEntries(
  ["github", "google-drive", "notion", "slack", "linear", "jira"].map((s) => [s, { client_id: `${s}-client`, client_secret: `${s}-secret` }]),
);
const PKCE = new Set(["github", "google-drive", "linear"]);
const NO_REFRESH = new Set(["github"]);

interface Item { id: string; title: string; body: string }
const ACCOUNTS: Record<string, { login: string; email: string; name: string; items: Item[] }> = {
  alice: {
    login: "alice-gh",
    email: "alice@acme.test",
    name: "Alice Doe",
    items: [
      { id: "1001", title: "Refund policy for annual plans", body: "Annual plans can be refunded within 30 days of purchase; after that the unused months are credited." },
      { id: "1002", title: "Deploy checklist", body: "Run the database migrations before deploying the worker, then warm the cache." },
    ],
  },
  bob: {
    login: "bob-gh",
    email: "bob@acme.test",
    name: "Bob Roe",
    items: [{ id: "2001", title: "Quarterly roadmap", body: "Bob's private plan: launch the falcon project in May." }],
  },
};

interface Grant { slug: string; account: string; flags: Record<string, string> }
const codes = new Map<string, Grant & { clientId: string; redirectUri: string; challenge: string | null }>();
const accessTokens = new Map<string, Grant & { exp: number | null }>();
const refreshTokens = new Map<string, Grant>();
const log = { refreshes: [] as string[], revocations: [] as string[], tokenRequests: [] as Array<Record<string, string>> };

const rand = () => randomBytes(12).toString("hex");
const b64url = (b: Buffer) => b.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "Content-Type": typeof body === "string" ? "text/plain" : "application/json", ...headers });
  res.end(text);
}

async function readBody(req: http.IncomingMessage): Promise<Record<string, any>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  if (!raw) return {};
  if ((req.headers["content-type"] ?? "").includes("json")) return JSON.parse(raw);
  return Object.fromEntries(new URLSearchParams(raw));
}

function matches(items: Item[], query: string): Item[] {
  const words = query.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length >= 4);
  return items.filter((it) => words.some((w) => `${it.title} ${it.body}`.toLowerCase().includes(w)));
}

function issueTokens(slug: string, grant: Grant) {
  const access = `${slug}-at-${rand()}`;
  const expiresIn = grant.flags.test_expires_in !== undefined ? Number(grant.flags.test_expires_in) : 3600;
  const exp = NO_REFRESH.has(slug) ? null : Date.now() + expiresIn * 1000;
  accessTokens.set(access, { ...grant, exp });
  const refresh = NO_REFRESH.has(slug) ? null : `${slug}-rt-${rand()}`;
  if (refresh) refreshTokens.set(refresh, grant);
  return { access, refresh, expiresIn: NO_REFRESH.has(slug) ? null : expiresIn };
}

function tokenAnswer(slug: string, grant: Grant, t: { access: string; refresh: string | null; expiresIn: number | null }, first: boolean) {
  const acct = ACCOUNTS[grant.account];
  if (slug === "slack") {
    const user = { id: `U${grant.account.toUpperCase()}`, scope: "search:read,channels:history", access_token: t.access, token_type: "user", refresh_token: t.refresh, expires_in: t.expiresIn };
    return first ? { ok: true, app_id: "A1", authed_user: user, team: { id: "T1", name: "Acme" } } : { ok: true, ...user };
  }
  const base: Record<string, unknown> = { access_token: t.access, token_type: "bearer" };
  if (t.refresh) base.refresh_token = t.refresh;
  if (t.expiresIn !== null) base.expires_in = t.expiresIn;
  if (slug === "notion") {
    Object.assign(base, { bot_id: `bot-${grant.account}`, workspace_id: "ws-1", workspace_name: "Acme wiki", owner: { type: "user", user: { object: "user", id: `nu-${grant.account}`, name: acct.name, person: { email: acct.email } } } });
  }
  if (slug === "github") base.scope = "repo,read:user";
  return base;
}

function oauthError(res: http.ServerResponse, slug: string, error: string, description: string, status = 400) {
  if (slug === "slack") return send(res, 200, { ok: false, error });
  return send(res, status, { error, error_description: description });
}

async function token(req: http.IncomingMessage, res: http.ServerResponse, slug: string) {
  const body = await readBody(req);
  log.tokenRequests.push({ slug, grant_type: body.grant_type, has_verifier: body.code_verifier ? "yes" : "no" });
  let clientId = body.client_id;
  let secret = body.client_secret;
  if (slug === "notion") {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!basic || !(req.headers["content-type"] ?? "").includes("json")) return oauthError(res, slug, "invalid_client", "Notion wants Basic auth and a JSON body", 401);
    [clientId, secret] = Buffer.from(basic, "base64").toString().split(":");
  }
  if (slug === "jira" && !(req.headers["content-type"] ?? "").includes("json")) return oauthError(res, slug, "invalid_request", "JSON body expected");
  if (clientId !== CLIENTS[slug].client_id || secret !== CLIENTS[slug].client_secret) return oauthError(res, slug, "invalid_client", "bad client credentials", 401);

  if (body.grant_type === "authorization_code" || (slug === "github" && !body.grant_type)) {
    const grant = codes.get(body.code);
    codes.delete(body.code);
    if (!grant || grant.slug !== slug) return oauthError(res, slug, slug === "github" ? "bad_verification_code" : "invalid_grant", "unknown or used code");
    if (grant.redirectUri !== body.redirect_uri) return oauthError(res, slug, "invalid_grant", "redirect_uri mismatch");
    if (grant.challenge) {
      const expected = body.code_verifier ? b64url(createHash("sha256").update(body.code_verifier).digest()) : "";
      if (expected !== grant.challenge) return oauthError(res, slug, "invalid_grant", "PKCE verification failed");
    }
    const t = issueTokens(slug, grant);
    const answer = tokenAnswer(slug, grant, t, true);
    // GitHub answers 200 with the token (JSON because we ask for it).
    return send(res, 200, answer);
  }
  if (body.grant_type === "refresh_token") {
    const grant = refreshTokens.get(body.refresh_token);
    if (!grant || grant.slug !== slug) return oauthError(res, slug, slug === "slack" ? "invalid_refresh_token" : "invalid_grant", "unknown refresh token");
    const failure = grant.flags.test_refresh_error;
    if (failure === "revoked") return oauthError(res, slug, slug === "slack" ? "token_revoked" : "invalid_grant", "Token has been revoked.");
    if (failure === "expired") return oauthError(res, slug, slug === "slack" ? "invalid_refresh_token" : "invalid_grant", "Refresh token expired.");
    if (failure === "scope") return oauthError(res, slug, "invalid_scope", "A required scope was removed.");
    refreshTokens.delete(body.refresh_token); // rotation
    log.refreshes.push(`${slug}:${grant.account}`);
    const t = issueTokens(slug, { ...grant, flags: { ...grant.flags, test_expires_in: "3600" } });
    return send(res, 200, tokenAnswer(slug, grant, t, false));
  }
  return oauthError(res, slug, "unsupported_grant_type", String(body.grant_type));
}

function authorize(res: http.ServerResponse, slug: string, url: URL) {
  const p = url.searchParams;
  const fail = (why: string) => send(res, 400, `authorize refused: ${why}`);
  if (p.get("client_id") !== CLIENTS[slug].client_id) return fail("unknown client_id");
  if (p.get("response_type") !== "code") return fail("response_type must be code");
  const redirectUri = p.get("redirect_uri");
  const state = p.get("state");
  if (!redirectUri || !state) return fail("redirect_uri and state are required");
  const challenge = p.get("code_challenge");
  if (PKCE.has(slug) && (!challenge || p.get("code_challenge_method") !== "S256")) return fail("S256 PKCE required");
  if (slug === "google-drive" && p.get("access_type") !== "offline") return fail("access_type=offline expected");
  if (slug === "jira" && (p.get("audience") !== "api.atlassian.com" || !(p.get("scope") ?? "").includes("offline_access"))) return fail("audience and offline_access expected");
  if (slug === "slack" && !p.get("user_scope")?.includes("search:read")) return fail("user_scope with search:read expected");
  if (slug === "notion" && p.get("owner") !== "user") return fail("owner=user expected");
  const back = new URL(redirectUri);
  back.searchParams.set("state", state);
  if (p.get("test_deny")) {
    back.searchParams.set("error", "access_denied");
  } else {
    const account = p.get("test_account") ?? "alice";
    if (!ACCOUNTS[account]) return fail("unknown test account");
    const flags: Record<string, string> = {};
    for (const k of ["test_expires_in", "test_refresh_error", "test_no_site"]) if (p.get(k) !== null) flags[k] = p.get(k)!;
    const code = `code-${rand()}`;
    codes.set(code, { slug, account, flags, clientId: p.get("client_id")!, redirectUri, challenge });
    back.searchParams.set("code", code);
  }
  res.writeHead(302, { Location: back.toString() });
  res.end();
}

function bearer(req: http.IncomingMessage, slug: string): (Grant & { exp: number | null }) | null {
  const tok = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  const g = tok ? accessTokens.get(tok) : undefined;
  if (!g || g.slug !== slug || (g.exp !== null && g.exp <= Date.now())) return null;
  return g;
}

const adf = (text: string) => ({ type: "doc", version: 1, content: [{ type: "paragraph", content: [{ type: "text", text }] }] });

async function api(req: http.IncomingMessage, res: http.ServerResponse, slug: string, path: string, url: URL) {
  const method = req.method ?? "GET";
  // Revocation endpoints authenticate differently.
  if (slug === "github" && method === "DELETE" && path === `/applications/${CLIENTS.github.client_id}/grant`) {
    const basic = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString();
    if (basic !== `${CLIENTS.github.client_id}:${CLIENTS.github.client_secret}`) return send(res, 401, { message: "Bad credentials" });
    const { access_token } = await readBody(req);
    if (!accessTokens.delete(access_token)) return send(res, 404, { message: "Not Found" });
    log.revocations.push(`github:${access_token}`);
    res.writeHead(204);
    return res.end();
  }
  if (slug === "notion" && method === "POST" && path === "/v1/oauth/revoke") {
    const basic = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString();
    if (basic !== `${CLIENTS.notion.client_id}:${CLIENTS.notion.client_secret}`) return send(res, 401, { message: "unauthorized" });
    const { token: t } = await readBody(req);
    accessTokens.delete(t);
    log.revocations.push(`notion:${t}`);
    return send(res, 200, { request_id: rand() });
  }
  const g = bearer(req, slug);
  if (!g) return slug === "slack" ? send(res, 200, { ok: false, error: "invalid_auth" }) : send(res, 401, { message: "invalid or expired token" });
  const acct = ACCOUNTS[g.account];
  const items = acct.items;
  const q = url.searchParams;

  if (slug === "github") {
    if (path === "/user") return send(res, 200, { login: acct.login, id: g.account === "alice" ? 1 : 2 });
    const issue = (it: Item) => ({ id: Number(it.id), number: Number(it.id) % 1000, title: it.title, body: it.body, state: "open", html_url: `https://github.com/acme/${g.account}-repo/issues/${Number(it.id) % 1000}`, repository_url: `https://api.github.com/repos/acme/${g.account}-repo`, user: { login: acct.login } });
    if (path === "/search/issues") {
      const found = matches(items, q.get("q") ?? "");
      return send(res, 200, { total_count: found.length, items: found.map(issue) });
    }
    let m = /^\/repos\/acme\/([a-z]+)-repo\/issues\/(\d+)(\/comments)?$/.exec(path);
    if (m) {
      if (m[1] !== g.account) return send(res, 404, { message: "Not Found" });
      const it = items.find((i) => Number(i.id) % 1000 === Number(m![2]));
      if (!it) return send(res, 404, { message: "Not Found" });
      return send(res, 200, m[3] ? [{ user: { login: "reviewer" }, body: "Confirmed with finance." }] : issue(it));
    }
    m = /^\/repos\/acme\/([a-z]+)-repo\/contents\/(.+)$/.exec(path);
    if (m) {
      if (m[1] !== g.account || m[2] !== "README.md") return send(res, 404, { message: "Not Found" });
      const content = `# ${g.account}'s repository\n\n${items.map((i) => `${i.title}: ${i.body}`).join("\n")}`;
      return send(res, 200, { type: "file", encoding: "base64", content: Buffer.from(content).toString("base64"), path: "README.md", sha: "abc123", html_url: `https://github.com/acme/${g.account}-repo/blob/main/README.md` });
    }
  }

  if (slug === "google-drive") {
    if (path === "/drive/v3/about") return send(res, 200, { user: { emailAddress: acct.email, permissionId: `perm-${g.account}`, displayName: acct.name } });
    const file = (it: Item) => ({ id: `file-${it.id}`, name: it.title, mimeType: "application/vnd.google-apps.document", webViewLink: `https://docs.google.com/document/d/file-${it.id}/edit` });
    if (path === "/drive/v3/files") {
      const m = /fullText contains '((?:[^'\\]|\\.)*)' and trashed = false/.exec(q.get("q") ?? "");
      if (!m) return send(res, 400, { error: { message: "Invalid Value" } });
      return send(res, 200, { files: matches(items, m[1]).map(file) });
    }
    const m = /^\/drive\/v3\/files\/file-(\d+)(\/export)?$/.exec(path);
    if (m) {
      const it = items.find((i) => i.id === m[1]);
      if (!it) return send(res, 404, { error: { message: "File not found" } });
      if (m[2]) return q.get("mimeType") === "text/plain" ? send(res, 200, `${it.title}\n\n${it.body}`) : send(res, 400, { error: { message: "bad export type" } });
      if (q.get("alt") === "media") return send(res, 403, { error: { message: "Only files with binary content can be downloaded. Use Export with Docs Editors files." } });
      return send(res, 200, file(it));
    }
  }

  if (slug === "notion") {
    if (!req.headers["notion-version"]) return send(res, 400, { code: "missing_version", message: "Notion-Version header failed validation" });
    const pageId = (it: Item) => `00000000-0000-4000-8000-00000000${it.id}`;
    const page = (it: Item) => ({ object: "page", id: pageId(it), url: `https://www.notion.so/${it.title.replace(/\s+/g, "-")}-${it.id}`, properties: { title: { id: "title", type: "title", title: [{ plain_text: it.title }] } } });
    if (method === "POST" && path === "/v1/search") {
      const body = await readBody(req);
      return send(res, 200, { object: "list", results: matches(items, body.query ?? "").map(page), has_more: false });
    }
    const m = /^\/v1\/(pages|blocks)\/([0-9a-f-]+)(\/children)?$/.exec(path);
    if (m) {
      const it = items.find((i) => pageId(i) === m[2]);
      if (!it) return send(res, 404, { object: "error", code: "object_not_found", message: "Could not find page" });
      if (m[1] === "pages") return send(res, 200, page(it));
      return send(res, 200, { object: "list", results: [{ type: "heading_1", heading_1: { rich_text: [{ plain_text: it.title }] } }, { type: "paragraph", paragraph: { rich_text: [{ plain_text: it.body }] } }] });
    }
  }

  if (slug === "slack") {
    if (path === "/auth.test") return send(res, 200, { ok: true, url: "https://acme.slack.com/", team: "Acme", user: g.account, team_id: "T1", user_id: `U${g.account.toUpperCase()}` });
    if (path === "/auth.revoke") {
      const tok = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      accessTokens.delete(tok);
      log.revocations.push(`slack:${tok}`);
      return send(res, 200, { ok: true, revoked: true });
    }
    const msg = (it: Item) => ({ type: "message", user: `U${g.account.toUpperCase()}`, username: g.account, text: `${it.title}: ${it.body}`, ts: `17000000${it.id}.000100`, channel: { id: "C0GENERAL", name: "general" }, permalink: `https://acme.slack.com/archives/C0GENERAL/p17000000${it.id}000100` });
    if (path === "/search.messages") {
      const found = matches(items, q.get("query") ?? "");
      return send(res, 200, { ok: true, query: q.get("query"), messages: { total: found.length, matches: found.map(msg) } });
    }
    if (path === "/conversations.history") {
      if (q.get("channel") !== "C0GENERAL") return send(res, 200, { ok: false, error: "channel_not_found" });
      return send(res, 200, { ok: true, messages: items.map(msg).map(({ channel: _c, permalink: _p, ...m }) => m), has_more: false });
    }
  }

  if (slug === "linear") {
    if (method === "POST" && path === "/oauth/revoke") {
      const tok = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      accessTokens.delete(tok);
      log.revocations.push(`linear:${tok}`);
      return send(res, 200, {});
    }
    if (method === "POST" && path === "/graphql") {
      const { query, variables } = await readBody(req);
      const node = (it: Item) => ({ id: `lin-${it.id}`, identifier: `ENG-${Number(it.id) % 1000}`, title: it.title, description: it.body, url: `https://linear.app/acme/issue/ENG-${Number(it.id) % 1000}`, state: { name: "Todo" }, assignee: { name: acct.name }, comments: { nodes: [{ body: "On it.", user: { name: acct.name } }] } });
      if (String(query).includes("viewer")) return send(res, 200, { data: { viewer: { id: `lu-${g.account}`, name: acct.name, email: acct.email } } });
      if (String(query).includes("searchIssues")) return send(res, 200, { data: { searchIssues: { nodes: matches(items, variables?.term ?? "").map(node) } } });
      if (String(query).includes("issue(")) {
        const it = items.find((i) => `lin-${i.id}` === variables?.id || `ENG-${Number(i.id) % 1000}` === variables?.id);
        if (!it) return send(res, 200, { data: { issue: null }, errors: [{ message: "Entity not found: Issue", extensions: { code: "INVALID_INPUT" } }] });
        return send(res, 200, { data: { issue: node(it) } });
      }
      return send(res, 200, { errors: [{ message: "Unknown query" }] });
    }
  }

  if (slug === "jira") {
    const cloud = `cloud-${g.account}`;
    if (path === "/oauth/token/accessible-resources") {
      return send(res, 200, g.flags.test_no_site ? [] : [{ id: cloud, url: `https://${g.account}-acme.atlassian.net`, name: "acme", scopes: ["read:jira-work", "read:jira-user"], avatarUrl: "" }]);
    }
    if (path === "/me") return send(res, 200, { account_id: `acc-${g.account}`, email: acct.email, name: acct.name });
    const m = /^\/ex\/jira\/([^/]+)\/rest\/api\/3\/(search\/jql|issue\/([A-Z]+-\d+))$/.exec(path);
    if (m) {
      if (m[1] !== cloud) return send(res, 404, { errorMessages: ["Site not found"] });
      const issue = (it: Item) => ({ id: `j${it.id}`, key: `OPS-${Number(it.id) % 1000}`, fields: { summary: it.title, status: { name: "Open" }, description: adf(it.body), assignee: { displayName: acct.name }, comment: { comments: [{ author: { displayName: "Support" }, body: adf("Customer notified.") }] } } });
      if (m[2] === "search/jql") {
        const jql = q.get("jql") ?? "";
        const text = /text ~ "([^"]*)"/.exec(jql)?.[1] ?? jql;
        return send(res, 200, { issues: matches(items, text).map(issue), isLast: true });
      }
      const it = items.find((i) => `OPS-${Number(i.id) % 1000}` === m[3]);
      if (!it) return send(res, 404, { errorMessages: ["Issue does not exist or you do not have permission to see it."] });
      return send(res, 200, issue(it));
    }
  }
  return send(res, 404, { message: `no such endpoint in the ${slug} double: ${method} ${path}` });
}

async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<unknown> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (url.pathname === "/_control/log") return send(res, 200, log);
  const m = /^\/([a-z-]+)(\/.*)$/.exec(url.pathname);
  const slug = m?.[1];
  if (!m || !slug || !CLIENTS[slug]) return send(res, 404, "unknown connector");
  const rest = m[2];
  if (rest === "/oauth/authorize" && req.method === "GET") return authorize(res, slug, url);
  if (rest === "/oauth/token" && req.method === "POST") return token(req, res, slug);
  if (slug === "google-drive" && rest === "/oauth/revoke" && req.method === "POST") {
    const { token: t } = await readBody(req);
    const known = accessTokens.delete(t) || refreshTokens.delete(t);
    log.revocations.push(`google-drive:${t}`);
    return known ? send(res, 200, {}) : send(res, 400, { error: "invalid_token" });
  }
  if (rest.startsWith("/api/")) return api(req, res, slug, rest.slice(4), url);
  return send(res, 404, "not found");
}

export const handler: Handler = async (req, res) => {
  await route(req, res);
};

import type { Env } from "../../env";
import { isProduction } from "../../lib/config";
import { ApiError } from "../../lib/errors";
import { assertResolvesPublic, assertUrlAllowed, guardPolicy, MAX_REDIRECTS, urlNotAllowed } from "../../lib/url-guard";

/**
 * URL rules of MCP servers (API-DECISIONS "MCP servers"): in production only
 * `https:` and public addresses; elsewhere `http:` too, private addresses only
 * with ALLOW_PRIVATE_URLS. Checked at registration AND at every connection (a
 * name that resolved to a public address yesterday may resolve to 10.0.0.1
 * today: DNS rebinding), through `mcpFetch`, which every SDK transport and OAuth
 * request uses.
 */
export function assertMcpUrl(env: Env, url: URL): void {
  if (isProduction(env) && url.protocol !== "https:") throw urlNotAllowed("MCP servers must use https in production");
  assertUrlAllowed(url, guardPolicy(env));
}

/** Parses and checks a registration URL; 400 naming `body.url` when refused. */
export async function parseMcpUrl(env: Env, raw: string): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ApiError("invalid_request", `'${raw}' is not a valid URL`, { details: [{ path: "body.url", message: "Invalid URL" }] });
  }
  url.hash = "";
  try {
    assertMcpUrl(env, url);
    await assertResolvesPublic(url, guardPolicy(env), AbortSignal.timeout(5000));
  } catch (e) {
    if (e instanceof ApiError) {
      throw new ApiError("url_not_allowed", e.message, { details: [{ path: "body.url", message: e.message }] });
    }
    throw e;
  }
  return url;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** What the last answer of a server said about authorization (a 401 and its challenge). */
export interface FetchObservations {
  unauthorized: boolean;
  challenge: string | null;
}

/**
 * A fetch for the MCP SDK that runs the URL guard on every request and every
 * redirect hop. Redirects the SDK wants followed are followed here by hand (at
 * most 5, each checked); `manual` redirects are returned to the SDK, whose next
 * request comes back through here.
 */
export function mcpFetch(env: Env, seen?: FetchObservations): typeof fetch {
  const policy = guardPolicy(env);
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input as RequestInfo, init);
    let url = new URL(req.url);
    let method = req.method;
    let body: ArrayBuffer | null = method === "GET" || method === "HEAD" ? null : await req.arrayBuffer();
    const headers = new Headers(req.headers);
    const follow = (init?.redirect ?? "follow") === "follow";
    for (let hop = 0; ; hop++) {
      assertMcpUrl(env, url);
      await assertResolvesPublic(url, policy, req.signal);
      const res = await fetch(url.toString(), { method, headers, body, redirect: "manual", signal: req.signal });
      if (seen && res.status === 401) {
        seen.unauthorized = true;
        seen.challenge = res.headers.get("WWW-Authenticate");
      }
      if (!follow || !REDIRECTS.has(res.status)) return res;
      const location = res.headers.get("Location");
      if (!location || hop >= MAX_REDIRECTS) return res;
      await res.body?.cancel();
      url = new URL(location, url);
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = null;
        headers.delete("Content-Type");
      }
    }
  }) as typeof fetch;
}

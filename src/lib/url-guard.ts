import type { Env } from "../env";
import { config } from "./config";
import { blockedHost, blockedIPv4, blockedIPv6, parseIPv4, parseIPv6 } from "./blocked-hosts";
import { ApiError } from "./errors";

/**
 * The one gate for outbound fetches to URLs that callers choose (web pages and
 * sites today; MCP servers and A2A agent cards later). It refuses:
 *  - schemes other than http and https, and credentials in the URL;
 *  - localhost and internal names (`localhost`, `*.localhost`, `*.local`,
 *    `*.internal`, `metadata.google.internal`, single-label names);
 *  - private, loopback, link-local, CGNAT, multicast, reserved, documentation
 *    and unspecified addresses, in every IPv4 spelling (decimal, octal, hex,
 *    shortened) and IPv6 form (::1, fc00::/7, fe80::/10, IPv4-mapped,
 *    NAT64, 6to4), cloud metadata (169.254.169.254, fd00:ec2::254) included;
 *  - all of the above again after every redirect (followed by hand, at most 5);
 *  - when a DNS-over-HTTPS endpoint is configured (the production default),
 *    hostnames that resolve to such addresses.
 * ALLOW_PRIVATE_URLS=true lifts the address rules (development only); or it
 * lists host:port pairs allowed despite being private (tests allow only their
 * local server, and still prove that a redirect to 10.0.0.1 is refused).
 */

export const FETCH_TIMEOUT_MS = 15_000;
export const FETCH_MAX_BYTES = 5 * 1024 * 1024;
export const MAX_REDIRECTS = 5;
const USER_AGENT = "kb-chat-service/1.0 (+https://github.com/; document ingestion)";

export const urlNotAllowed = (message: string) => new ApiError("url_not_allowed", message);
export const fetchFailed = (message: string) => new ApiError("fetch_failed", message);

export interface GuardPolicy {
  allowAllPrivate: boolean;
  /** host:port pairs (lower case) allowed although private. */
  allowed: Set<string>;
  /** DNS-over-HTTPS JSON endpoint to check resolved addresses with; null = no DNS check. */
  dohUrl: string | null;
}

export function guardPolicy(env: Env): GuardPolicy {
  const { allowPrivate: raw, dohUrl } = config(env).urlGuard;
  const allowAllPrivate = raw.toLowerCase() === "true";
  const allowed = new Set(
    allowAllPrivate || raw.toLowerCase() === "false"
      ? []
      : raw
          .split(",")
          .map((s) => s.trim().toLowerCase())
          .filter(Boolean),
  );
  return { allowAllPrivate, allowed, dohUrl };
}

const hostPort = (u: URL) => `${u.hostname.toLowerCase()}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;

/** Synchronous checks of one URL (also used for every redirect target). */
export function assertUrlAllowed(url: URL, policy: GuardPolicy): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw urlNotAllowed(`Only http and https URLs can be fetched (got ${url.protocol})`);
  if (url.username || url.password) throw urlNotAllowed("URLs with credentials (user:password@) are not allowed");
  if (policy.allowAllPrivate || policy.allowed.has(hostPort(url))) return;
  const why = blockedHost(url.hostname);
  if (why) throw urlNotAllowed(`The URL's host ${url.hostname} is ${why}; only public addresses can be fetched`);
}

async function resolves(doh: string, name: string, type: "A" | "AAAA", signal: AbortSignal): Promise<string[]> {
  const u = new URL(doh);
  u.searchParams.set("name", name);
  u.searchParams.set("type", type);
  const res = await fetch(u.toString(), { headers: { Accept: "application/dns-json" }, signal });
  if (!res.ok) throw new Error(`DNS-over-HTTPS answered ${res.status}`);
  const body = (await res.json()) as { Answer?: { type: number; data: string }[] };
  return (body.Answer ?? []).filter((a) => a.type === (type === "A" ? 1 : 28)).map((a) => a.data);
}

/** With a DoH endpoint configured, refuses hostnames whose A/AAAA records are not public. */
export async function assertResolvesPublic(url: URL, policy: GuardPolicy, signal: AbortSignal): Promise<void> {
  if (!policy.dohUrl || policy.allowAllPrivate || policy.allowed.has(hostPort(url))) return;
  const host = url.hostname.toLowerCase();
  if (host.startsWith("[") || parseIPv4(host) !== null) return; // literals were checked already
  let addresses: string[];
  try {
    addresses = (await Promise.all([resolves(policy.dohUrl, host, "A", signal), resolves(policy.dohUrl, host, "AAAA", signal)])).flat();
  } catch (e) {
    throw fetchFailed(`Could not resolve ${host} (${(e as Error).message})`);
  }
  if (!addresses.length) throw fetchFailed(`${host} does not resolve to any address`);
  for (const a of addresses) {
    const why = a.includes(":") ? (parseIPv6(a) ? blockedIPv6(parseIPv6(a)!) : "invalid") : blockedIPv4(parseIPv4(a) ?? 0);
    if (why) throw urlNotAllowed(`${host} resolves to ${a}, which is ${why}; only public addresses can be fetched`);
  }
}

/** A user-typed URL: `https://` is added when the scheme is missing; must parse. */
export function normalizeUserUrl(input: string): URL {
  const raw = input.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw.replace(/^\/\//, "")}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ApiError("invalid_request", `'${input}' is not a valid URL`, { details: [{ path: "body.url", message: "Invalid URL" }] });
  }
  url.hash = "";
  return url;
}

export interface FetchedPage {
  /** The final URL after redirects. */
  url: URL;
  status: number;
  headers: Headers;
  body: Uint8Array;
  contentType: string;
}

/**
 * GET a URL through the guard: redirects followed by hand (each hop checked),
 * a deadline for the whole exchange, and the body streamed with a size cap.
 * Non-2xx answers and network errors are `fetch_failed` (422); refused
 * addresses `url_not_allowed` (400); a body over the cap `payload_too_large` (413).
 */
export async function guardedFetch(
  env: Env,
  input: URL | string,
  opts: {
    accept?: string;
    maxBytes?: number;
    timeoutMs?: number;
    maxRedirects?: number;
    allowStatus?: (s: number) => boolean;
    /** Extra request headers (credentials of a registration): sent only while the URL stays on the first URL's origin. */
    headers?: Record<string, string>;
  } = {},
): Promise<FetchedPage> {
  const policy = guardPolicy(env);
  const maxBytes = opts.maxBytes ?? FETCH_MAX_BYTES;
  const signal = AbortSignal.timeout(opts.timeoutMs ?? FETCH_TIMEOUT_MS);
  let url = typeof input === "string" ? normalizeUserUrl(input) : new URL(input.toString());
  const firstOrigin = url.origin;
  const seconds = Math.round((opts.timeoutMs ?? FETCH_TIMEOUT_MS) / 1000);
  try {
    for (let hop = 0; ; hop++) {
      assertUrlAllowed(url, policy);
      await assertResolvesPublic(url, policy, signal);
      let res: Response;
      try {
        res = await fetch(url.toString(), {
          method: "GET",
          redirect: "manual",
          signal,
          // A redirect elsewhere does not take the caller's credentials with it (as browsers drop Authorization).
          headers: { ...(url.origin === firstOrigin ? opts.headers : {}), "User-Agent": USER_AGENT, Accept: opts.accept ?? "*/*" },
        });
      } catch (e) {
        if (signal.aborted) throw fetchFailed(`${url.host} did not answer within ${seconds} s`);
        throw fetchFailed(`Could not reach ${url.origin} (${(e as Error).message})`);
      }
      if ([301, 302, 303, 307, 308].includes(res.status)) {
        await res.body?.cancel();
        const location = res.headers.get("Location");
        if (!location) throw fetchFailed(`${url.host} answered a redirect without a Location`);
        if (hop >= (opts.maxRedirects ?? MAX_REDIRECTS)) throw fetchFailed(`Too many redirects (more than ${opts.maxRedirects ?? MAX_REDIRECTS})`);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw fetchFailed(`${url.host} redirected to an invalid URL`);
        }
        next.hash = "";
        url = next;
        continue;
      }
      if (!(res.status >= 200 && res.status < 300) && !opts.allowStatus?.(res.status)) {
        await res.body?.cancel();
        throw fetchFailed(`${url.toString()} answered HTTP ${res.status}`);
      }
      const declared = Number(res.headers.get("Content-Length"));
      if (Number.isFinite(declared) && declared > maxBytes) {
        await res.body?.cancel();
        throw new ApiError("payload_too_large", `The page is larger than ${maxBytes} bytes`);
      }
      const body = await readCapped(res, maxBytes);
      return { url, status: res.status, headers: res.headers, body, contentType: res.headers.get("Content-Type") ?? "" };
    }
  } catch (e) {
    if (e instanceof ApiError) throw e;
    if (signal.aborted) throw fetchFailed(`${url.host} did not answer within ${seconds} s`);
    throw fetchFailed(`Fetching ${url.host} failed (${(e as Error).message})`);
  }
}

async function readCapped(res: Response, maxBytes: number): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new ApiError("payload_too_large", `The page is larger than ${maxBytes} bytes`);
    }
    parts.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";
import { assertUrlAllowed, fetchFailed, guardedFetch, guardPolicy, normalizeUserUrl } from "../../lib/url-guard";
import { decodeHtml } from "./ingest-url";

/** The specification's limit on discovered pages. */
export const MAX_SITE_URLS = 25;
const MAX_SITEMAPS = 5;
const SITE_DEADLINE_MS = 25_000;
/** Links to these are files, not pages. */
const NON_PAGE = /\.(png|jpe?g|gif|webp|svg|ico|css|js|mjs|map|zip|gz|tgz|rar|7z|mp3|mp4|mov|avi|webm|woff2?|ttf|eot|exe|dmg|iso)$/i;

interface RobotsRules {
  allow: string[];
  disallow: string[];
  sitemaps: string[];
}

/** robots.txt: Sitemap lines, and the Allow/Disallow rules of the `*` group. */
export function parseRobots(text: string): RobotsRules {
  const rules: RobotsRules = { allow: [], disallow: [], sitemaps: [] };
  let agents: string[] = [];
  let inRules = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, "").trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const field = m[1].toLowerCase();
    const value = m[2].trim();
    if (field === "sitemap") {
      if (value) rules.sitemaps.push(value);
    } else if (field === "user-agent") {
      if (inRules) agents = [];
      inRules = false;
      agents.push(value.toLowerCase());
    } else if (field === "allow" || field === "disallow") {
      inRules = true;
      if (agents.includes("*") && value) (field === "allow" ? rules.allow : rules.disallow).push(value);
    }
  }
  return rules;
}

function ruleMatches(rule: string, path: string): number {
  const anchored = rule.endsWith("$");
  const pattern = (anchored ? rule.slice(0, -1) : rule).split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${pattern}${anchored ? "$" : ""}`).test(path) ? rule.length : -1;
}

/** The longest matching rule wins; Allow wins ties (RFC 9309). */
export function robotsAllows(rules: RobotsRules, url: URL): boolean {
  const path = url.pathname + url.search;
  const allow = Math.max(-1, ...rules.allow.map((r) => ruleMatches(r, path)));
  const disallow = Math.max(-1, ...rules.disallow.map((r) => ruleMatches(r, path)));
  return disallow < 0 || allow >= disallow;
}

function locs(xml: string): string[] {
  return [...xml.matchAll(/<loc>\s*(?:<!\[CDATA\[)?([\s\S]*?)(?:\]\]>)?\s*<\/loc>/gi)].map((m) =>
    m[1].trim().replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'"),
  );
}

async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Response(bytes).body!.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * POST /documents/upload-url-site: up to 25 page URLs of a site, from
 * robots.txt's Sitemap lines and /sitemap.xml (sitemap indexes followed, gzip
 * accepted), then the links of the root page. Same host as the root, or its
 * subdomains when asked; robots.txt Disallow rules for `*` are honoured. Every
 * fetch goes through the URL guard. Nothing is ingested: the caller picks
 * pages and sends them to /documents/upload-url.
 */
export async function discoverSite(env: Env, rawRoot: string, includeSubdomains: boolean): Promise<string[]> {
  const root = normalizeUserUrl(rawRoot);
  assertUrlAllowed(root, guardPolicy(env));
  const deadline = Date.now() + SITE_DEADLINE_MS;
  const remaining = () => Math.max(1000, deadline - Date.now());
  const rootHost = root.hostname.toLowerCase();
  const baseDomain = rootHost.replace(/^www\./, "");
  const inScope = (u: URL) =>
    (u.protocol === "http:" || u.protocol === "https:") &&
    (u.hostname.toLowerCase() === rootHost ||
      (includeSubdomains && (u.hostname.toLowerCase() === baseDomain || u.hostname.toLowerCase().endsWith(`.${baseDomain}`))));

  const found = new Map<string, true>();
  let rules: RobotsRules = { allow: [], disallow: [], sitemaps: [] };
  let anythingFetched = false;
  let lastError: unknown = null;

  const consider = (href: string, base: URL) => {
    if (found.size >= MAX_SITE_URLS) return;
    let u: URL;
    try {
      u = new URL(href, base);
    } catch {
      return;
    }
    u.hash = "";
    if (!inScope(u) || NON_PAGE.test(u.pathname) || !robotsAllows(rules, u)) return;
    found.set(u.toString(), true);
  };

  try {
    const robots = await guardedFetch(env, new URL("/robots.txt", root), { accept: "text/plain", timeoutMs: remaining() });
    rules = parseRobots(new TextDecoder().decode(robots.body));
    anythingFetched = true;
  } catch (e) {
    lastError = e;
  }

  const queue = [...rules.sitemaps, new URL("/sitemap.xml", root).toString()];
  const seen = new Set<string>();
  for (let fetched = 0; queue.length && fetched < MAX_SITEMAPS && found.size < MAX_SITE_URLS && Date.now() < deadline; ) {
    const next = queue.shift()!;
    if (seen.has(next)) continue;
    seen.add(next);
    let sitemapUrl: URL;
    try {
      sitemapUrl = new URL(next, root);
    } catch {
      continue;
    }
    fetched++;
    try {
      const res = await guardedFetch(env, sitemapUrl, { accept: "application/xml,text/xml;q=0.9,*/*;q=0.5", timeoutMs: remaining() });
      anythingFetched = true;
      const gz = /\.gz$/i.test(sitemapUrl.pathname) || /gzip/i.test(res.contentType) || (res.body[0] === 0x1f && res.body[1] === 0x8b);
      const xml = new TextDecoder().decode(gz ? await gunzip(res.body) : res.body);
      if (/<sitemapindex[\s>]/i.test(xml)) queue.push(...locs(xml));
      else for (const loc of locs(xml)) consider(loc, res.url);
    } catch (e) {
      lastError = e;
    }
  }

  if (found.size < MAX_SITE_URLS && Date.now() < deadline) {
    try {
      const page = await guardedFetch(env, root, { accept: "text/html,application/xhtml+xml", timeoutMs: remaining() });
      anythingFetched = true;
      if (/html/i.test(page.contentType) || !page.contentType) {
        const { parseHTML } = await import("linkedom");
        const { document } = parseHTML(decodeHtml(page.body, page.contentType));
        const base = document.querySelector("base[href]")?.getAttribute("href");
        const baseUrl = base ? new URL(base, page.url) : page.url;
        consider(page.url.toString(), page.url);
        for (const a of Array.from(document.querySelectorAll("a[href]"))) consider((a as { getAttribute(n: string): string | null }).getAttribute("href") ?? "", baseUrl);
      }
    } catch (e) {
      lastError = e;
    }
  }

  if (!found.size && !anythingFetched) {
    if (lastError instanceof ApiError && lastError.code === "url_not_allowed") throw lastError;
    throw fetchFailed(`Could not reach ${root.host}${lastError instanceof Error ? ` (${lastError.message})` : ""}`);
  }
  return [...found.keys()].slice(0, MAX_SITE_URLS);
}

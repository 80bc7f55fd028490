import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";
import { inflateBounded, InflateBudget } from "../../lib/inflate";
import { Slicer } from "../../lib/slices";
import { assertUrlAllowed, fetchFailed, guardedFetch, guardPolicy, normalizeUserUrl } from "../../lib/url-guard";
import { decodeHtml } from "./ingest-url";

/** The specification's limit on discovered pages. */
export const MAX_SITE_URLS = 25;
const MAX_SITEMAPS = 5;
const SITE_DEADLINE_MS = 25_000;
/**
 * Bytes a gzipped sitemap may inflate to, counted as they are produced
 * (sitemaps.org allows 50 MB, and 25 URLs are all we take): past it that
 * sitemap is dropped with a reason naming the cap, and discovery goes on.
 */
export const MAX_SITEMAP_INFLATED_BYTES = 16 * 1024 * 1024;
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

/** A fetched sitemap's XML: gzip (by name, type or magic bytes) inflated within MAX_SITEMAP_INFLATED_BYTES. */
export async function sitemapXml(body: Uint8Array, url: URL, contentType: string): Promise<string> {
  const gz = /\.gz$/i.test(url.pathname) || /gzip/i.test(contentType) || (body[0] === 0x1f && body[1] === 0x8b);
  if (!gz) return new TextDecoder().decode(body);
  const budget = new InflateBudget(MAX_SITEMAP_INFLATED_BYTES, `The sitemap ${url.toString().slice(0, 200)}`, "the decompression cap for sitemaps");
  const slicer = new Slicer();
  return new TextDecoder().decode(await inflateBounded("gzip", body, budget, { onSlice: (n) => slicer.tick(1 + (n >> 11)) }));
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
  const crawl = new SiteCrawl(env, root, includeSubdomains);
  await crawl.readRobots();
  await crawl.readSitemaps();
  await crawl.readRootLinks();
  return crawl.result();
}

/** One discovery: the pages found so far (in scope, allowed by robots.txt), within one deadline for all fetches. */
class SiteCrawl {
  private readonly deadline = Date.now() + SITE_DEADLINE_MS;
  private readonly rootHost: string;
  private readonly baseDomain: string;
  private readonly found = new Map<string, true>();
  private rules: RobotsRules = { allow: [], disallow: [], sitemaps: [] };
  private anythingFetched = false;
  private lastError: unknown = null;

  constructor(
    private readonly env: Env,
    private readonly root: URL,
    private readonly includeSubdomains: boolean,
  ) {
    this.rootHost = root.hostname.toLowerCase();
    this.baseDomain = this.rootHost.replace(/^www\./, "");
  }

  private remaining = () => Math.max(1000, this.deadline - Date.now());
  private open = () => this.found.size < MAX_SITE_URLS && Date.now() < this.deadline;

  private inScope(u: URL): boolean {
    const host = u.hostname.toLowerCase();
    if (u.protocol !== "http:" && u.protocol !== "https:") return false;
    return host === this.rootHost || (this.includeSubdomains && (host === this.baseDomain || host.endsWith(`.${this.baseDomain}`)));
  }

  private consider(href: string, base: URL): void {
    if (this.found.size >= MAX_SITE_URLS) return;
    let u: URL;
    try {
      u = new URL(href, base);
    } catch {
      return;
    }
    u.hash = "";
    if (!this.inScope(u) || NON_PAGE.test(u.pathname) || !robotsAllows(this.rules, u)) return;
    this.found.set(u.toString(), true);
  }

  /** A fetch through the URL guard that records whether anything answered, and the last failure. */
  private async fetch(url: URL, accept: string) {
    try {
      const res = await guardedFetch(this.env, url, { accept, timeoutMs: this.remaining() });
      this.anythingFetched = true;
      return res;
    } catch (e) {
      this.lastError = e;
      return null;
    }
  }

  async readRobots(): Promise<void> {
    const robots = await this.fetch(new URL("/robots.txt", this.root), "text/plain");
    if (robots) this.rules = parseRobots(new TextDecoder().decode(robots.body));
  }

  /** robots.txt's Sitemap lines, then /sitemap.xml; sitemap indexes are followed, gzip accepted. */
  async readSitemaps(): Promise<void> {
    const queue = [...this.rules.sitemaps, new URL("/sitemap.xml", this.root).toString()];
    const seen = new Set<string>();
    for (let fetched = 0; queue.length && fetched < MAX_SITEMAPS && this.open(); ) {
      const next = queue.shift()!;
      if (seen.has(next)) continue;
      seen.add(next);
      let sitemapUrl: URL;
      try {
        sitemapUrl = new URL(next, this.root);
      } catch {
        continue;
      }
      fetched++;
      const res = await this.fetch(sitemapUrl, "application/xml,text/xml;q=0.9,*/*;q=0.5");
      if (!res) continue;
      try {
        const xml = await sitemapXml(res.body, sitemapUrl, res.contentType);
        if (/<sitemapindex[\s>]/i.test(xml)) queue.push(...locs(xml));
        else for (const loc of locs(xml)) this.consider(loc, res.url);
      } catch (e) {
        this.lastError = e;
      }
    }
  }

  /** The root page itself and the links on it. */
  async readRootLinks(): Promise<void> {
    if (!this.open()) return;
    const page = await this.fetch(this.root, "text/html,application/xhtml+xml");
    if (!page || (page.contentType && !/html/i.test(page.contentType))) return;
    try {
      const { parseHTML } = await import("linkedom");
      const { document } = parseHTML(decodeHtml(page.body, page.contentType));
      const base = document.querySelector("base[href]")?.getAttribute("href");
      const baseUrl = base ? new URL(base, page.url) : page.url;
      this.consider(page.url.toString(), page.url);
      for (const a of Array.from(document.querySelectorAll("a[href]"))) this.consider((a as { getAttribute(n: string): string | null }).getAttribute("href") ?? "", baseUrl);
    } catch (e) {
      this.lastError = e;
    }
  }

  result(): string[] {
    if (!this.found.size && !this.anythingFetched) {
      if (this.lastError instanceof ApiError && this.lastError.code === "url_not_allowed") throw this.lastError;
      throw fetchFailed(`Could not reach ${this.root.host}${this.lastError instanceof Error ? ` (${this.lastError.message})` : ""}`);
    }
    return [...this.found.keys()].slice(0, MAX_SITE_URLS);
  }
}

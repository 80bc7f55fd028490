import { gzipSync as zlibGzip } from "node:zlib";
import { gzipSync, strToU8 } from "fflate";
import type { Handler } from "./index";

/**
 * A small website for web-ingestion tests: an article page with navigation
 * chrome, robots.txt with sitemaps (an index, a urlset, a gzipped one; the
 * "web-bombs" copy of this site also lists a gzip bomb), a page whose
 * Content-Encoding is a gzip bomb,
 * redirects (relative, chains, to private and metadata addresses), a large
 * page, a slow page, a DNS-over-HTTPS endpoint for the URL guard.
 * Absolute URLs use the Host the request came with, so a test can address the
 * site as 127.0.0.1:<port> or localhost:<port>.
 */
const ARTICLE = `<!DOCTYPE html><html><head><title>Caring for Bonsai Trees</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop our bonsai deals</a></nav>
<article><h1>Caring for Bonsai Trees</h1>
<p>Bonsai trees need bright, indirect light and careful watering. Water when the top centimetre of soil feels dry, and never let the root ball dry out completely.</p>
<h2>Pruning</h2>
<p>Prune new shoots back to two leaves during the growing season to keep the canopy compact. Structural pruning is best done in late winter, just before buds open.</p>
</article>
<footer>Copyright Bonsai World. Cookie settings.</footer></body></html>`;

/** A gzip bomb: 80 MB of spaces in ~80 KB (made once, on first request). */
let bomb: Buffer | null = null;
const gzipBomb = () => (bomb ??= zlibGzip(Buffer.alloc(80 * 1024 * 1024, 32), { level: 9 }));

const DNS: Record<string, Record<string, string[]>> = {
  "private.test": { A: ["10.0.0.5"], AAAA: [] },
  "metadata.test": { A: ["93.184.216.34"], AAAA: ["fd00:ec2::254"] },
  "public.test": { A: ["93.184.216.34"], AAAA: [] },
};

export const handler: Handler = async (req, res) => {
  const host = req.headers.host ?? "127.0.0.1";
  const origin = `http://${host}`;
  const [hostname, port] = host.split(":");
  const url = new URL(req.url ?? "/", origin);
  const send = (status: number, body: string | Uint8Array, type = "text/html; charset=utf-8", headers: Record<string, string> = {}) => {
    res.writeHead(status, { "Content-Type": type, ...headers });
    res.end(body);
  };
  const redirect = (location: string, status = 302) => {
    res.writeHead(status, { Location: location });
    res.end();
  };
  switch (url.pathname) {
    case "/":
      return send(200, `<html><head><title>Home</title></head><body>
        <a href="/article">Article</a> <a href="article#comments">Same article</a> <a href="/about">About</a>
        <a href="/logo.png">Logo</a> <a href="/private/secret">Hidden</a> <a href="mailto:a@b.c">Mail</a>
        <a href="https://elsewhere.example/page">Elsewhere</a></body></html>`);
    case "/article":
      return send(200, ARTICLE);
    case "/about":
      return send(200, "<html><head><title>About</title></head><body><p>About this site.</p></body></html>");
    case "/notes.txt":
      return send(200, "Plain text notes about watering schedules.", "text/plain; charset=utf-8");
    case "/image.png":
      return send(200, new Uint8Array([0x89, 0x50, 0x4e, 0x47]), "image/png");
    case "/missing":
      return send(404, "not here");
    case "/empty":
      return send(200, "<html><body><nav>Only navigation</nav></body></html>");
    case "/big":
      return send(200, `<html><body>${"<p>filler text</p>".repeat(400_000)}</body></html>`);
    case "/slow":
      await new Promise((r) => setTimeout(r, 3000));
      return send(200, ARTICLE);
    case "/redirect-relative":
      return redirect("/article");
    case "/redirect-private":
      return redirect("http://10.0.0.1/secret");
    case "/redirect-metadata":
      return redirect("http://169.254.169.254/latest/meta-data/", 301);
    case "/redirect-loopback":
      return redirect("http://[::ffff:127.0.0.1]:1/");
    case "/robots.txt":
      return send(200, `User-agent: *\nDisallow: /private/\nAllow: /private/open\n\nSitemap: ${origin}/sitemap-index.xml\n`, "text/plain");
    case "/sitemap-bomb.xml.gz":
      return send(200, gzipBomb(), "application/gzip");
    case "/bomb-encoded":
      return send(200, gzipBomb(), "text/html; charset=utf-8", { "Content-Encoding": "gzip" });
    case "/sitemap-index.xml":
      return send(200, `<?xml version="1.0"?><sitemapindex><sitemap><loc>${origin}/sitemap-pages.xml</loc></sitemap><sitemap><loc>${origin}/sitemap-more.xml.gz</loc></sitemap></sitemapindex>`, "application/xml");
    case "/sitemap-pages.xml":
      return send(
        200,
        `<?xml version="1.0"?><urlset>
          <url><loc>${origin}/article</loc></url>
          <url><loc>${origin}/private/secret</loc></url>
          <url><loc>${origin}/private/open</loc></url>
          <url><loc>http://docs.${hostname}:${port}/guide</loc></url>
          <url><loc>https://elsewhere.example/x</loc></url>
        </urlset>`,
        "application/xml",
      );
    case "/sitemap-more.xml.gz":
      return send(200, gzipSync(strToU8(`<urlset><url><loc>${origin}/about?x=1&amp;y=2</loc></url></urlset>`)), "application/gzip");
    case "/sitemap.xml":
      return send(404, "none");
    case "/dns-query": {
      const name = url.searchParams.get("name") ?? "";
      const type = url.searchParams.get("type") ?? "A";
      const answers = (DNS[name]?.[type] ?? []).map((data) => ({ name, type: type === "A" ? 1 : 28, TTL: 60, data }));
      return send(200, JSON.stringify({ Status: DNS[name] ? 0 : 3, Answer: answers }), "application/dns-json");
    }
    default:
      if (url.pathname.startsWith("/chain/")) {
        const n = Number(url.pathname.slice(7));
        return n > 0 ? redirect(`/chain/${n - 1}`) : send(200, ARTICLE);
      }
      return send(404, "not found");
  }
};

/**
 * The same site, whose robots.txt also lists the gzip-bomb sitemap: for the bounded-work tests only (their own
 * project in test/vitest.config.ts), so that no other discovery test fetches the bomb.
 */
export const bombSiteHandler: Handler = async (req, res, self) => {
  if (req.url === "/robots.txt") {
    const origin = `http://${req.headers.host}`;
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end(`User-agent: *\nDisallow: /private/\nAllow: /private/open\n\nSitemap: ${origin}/sitemap-index.xml\nSitemap: ${origin}/sitemap-bomb.xml.gz\n`);
    return;
  }
  return handler(req, res, self);
};

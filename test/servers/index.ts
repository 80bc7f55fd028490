import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Local HTTP servers that speak real protocols (web pages, OpenAI-compatible
 * APIs, ...) for the tests. They run in the Node process that runs vitest and
 * are started from test/vitest.config.ts, so their URLs can be passed to the
 * Worker as bindings. Each capability adds a module exporting a handler and
 * registers it below; the Worker reaches it at http://127.0.0.1:<port>.
 */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, self: { url: string }) => void | Promise<void>;

export const handlers: Record<string, () => Promise<Handler>> = {
  // name: () => import("./name").then((m) => m.handler),
  openai: () => import("./openai").then((m) => m.handler),
  web: () => import("./web").then((m) => m.handler),
  "web-bombs": () => import("./web").then((m) => m.bombSiteHandler),
  searx: () => import("./searx").then((m) => m.handler),
  rerank: () => import("./rerank").then((m) => m.handler),
  mcp: () => import("./mcp").then((m) => m.handler),
  a2a: () => import("./a2a").then((m) => m.handler),
  connectors: () => import("./connectors").then((m) => m.handler),
};

/**
 * Starts every server on 127.0.0.1, each on a free port, or on `ports[name]` when given (`npm run dev:stack`
 * uses fixed ports so the README can name them). Returns name -> base URL.
 */
export async function startTestServers(ports: Record<string, number> = {}): Promise<Record<string, string>> {
  const urls: Record<string, string> = {};
  for (const [name, load] of Object.entries(handlers)) {
    const handler = await load();
    const self = { url: "" };
    const server = http.createServer((req, res) => {
      Promise.resolve(handler(req, res, self)).catch((e) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(ports[name] ?? 0, "127.0.0.1", resolve);
    });
    server.unref();
    self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    urls[name] = self.url;
  }
  return urls;
}

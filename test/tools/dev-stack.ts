/**
 * `npm run dev:stack`: the service (as `npm start`) together with the local stand-ins of test/servers, so every
 * capability can be seen working offline: provider models that call tools, MCP servers (one behind its own
 * OAuth authorization server), an A2A agent, each connector's OAuth provider and API, a website and a web
 * search endpoint. The same servers the test suite uses (test/vitest.config.ts), on fixed ports so the README
 * can name them:
 *
 *   STACK_PORT+1 openai      OpenAI-compatible chat completions with tool calls and embeddings (models below)
 *   STACK_PORT+2 mcp         MCP servers: /open/mcp (no auth), /cred/mcp (bearer cred-OK-123), /r/<realm>/mcp (OAuth)
 *   STACK_PORT+3 a2a         an A2A agent: /.well-known/agent-card.json, JSON-RPC at /rpc
 *   STACK_PORT+4 connectors  GitHub, Google Drive, Notion, Slack, Linear and Jira: OAuth (auto-approving) and API
 *   STACK_PORT+5 web         a small website (/article, /robots.txt, sitemaps)
 *   STACK_PORT+6 searx       a SearXNG-compatible web search (/search?format=json)
 *   STACK_PORT+7 rerank      a /rerank endpoint
 *
 * STACK_PORT defaults to 8700. Arguments are passed to `wrangler dev` as with `npm start` (e.g. `--port`,
 * `--persist-to`); variables set in the environment or .dev.vars are overridden by the stack's own.
 *
 * Run by Node 22 directly (type stripping): only erasable TypeScript here.
 */
import { registerHooks } from "node:module";
import { start } from "./start.ts";

// test/servers is written for vitest (relative imports without extensions); Node resolves them as `.ts` here.
registerHooks({
  resolve(specifier, context, next) {
    try {
      return next(specifier, context);
    } catch (e) {
      if (/^\.\.?\//.test(specifier) && !/\.[cm]?[jt]s$/.test(specifier)) return next(`${specifier}.ts`, context);
      throw e;
    }
  },
});

/** Port offsets from STACK_PORT; a stand-in added to test/servers later gets the next free offset from 10. */
const OFFSETS: Record<string, number> = { openai: 1, mcp: 2, a2a: 3, connectors: 4, web: 5, searx: 6, rerank: 7 };

/** The models the stack offers besides local-extractive (test/servers/openai-chat.ts behaves by name). */
export const STACK_MODELS = [
  { id: "test-gpt", display_name: "Test GPT (local, calls tools)" },
  { id: "test-gpt-error", display_name: "Test GPT that always fails (HTTP 500)" },
  { id: "test-gpt-fail-mid-stream", display_name: "Test GPT that breaks off mid-answer" },
];

export const CONNECTOR_SLUGS = ["github", "google-drive", "notion", "slack", "linear", "jira"];

/** The Worker's configuration for the stand-ins at `urls` (name -> base URL). */
export function stackVariables(urls: Record<string, string>): Record<string, string> {
  const port = (name: string) => new URL(urls[name]).port;
  return {
    OPENAI_BASE_URL: `${urls.openai}/v1`,
    OPENAI_API_KEY: "local-stack-key",
    MODELS: JSON.stringify(STACK_MODELS.map((m) => ({ ...m, context_window: 16000, pricing: { input_per_1k: 1, output_per_1k: 2 } }))),
    WEB_SEARCH_URL: `${urls.searx}/search`,
    // The URL guard refuses private addresses; exactly the stand-ins are allowed.
    ALLOW_PRIVATE_URLS: [
      `127.0.0.1:${port("web")}`,
      `localhost:${port("web")}`,
      `127.0.0.1:${port("mcp")}`,
      `127.0.0.1:${port("a2a")}`,
      `127.0.0.1:${port("connectors")}`,
    ].join(","),
    CONNECTORS: JSON.stringify(Object.fromEntries(CONNECTOR_SLUGS.map((s) => [s, { client_id: `${s}-client`, client_secret: `${s}-secret` }]))),
    CONNECTOR_ENDPOINTS: JSON.stringify(
      Object.fromEntries(
        CONNECTOR_SLUGS.map((s) => [
          s,
          { authorize_url: `${urls.connectors}/${s}/oauth/authorize`, token_url: `${urls.connectors}/${s}/oauth/token`, api_base_url: `${urls.connectors}/${s}/api` },
        ]),
      ),
    ),
  };
}

export async function startStandIns(basePort: number): Promise<Record<string, string>> {
  const { handlers, startTestServers } = await import("../servers/index.ts");
  let next = 10;
  const ports = Object.fromEntries(Object.keys(handlers).map((name) => [name, basePort + (OFFSETS[name] ?? next++)]));
  try {
    return await startTestServers(ports);
  } catch (e) {
    throw new Error(`dev:stack: could not listen on ports ${basePort + 1}-${basePort + next} (${(e as Error).message}); set STACK_PORT to another base`);
  }
}

if (import.meta.main) {
  try {
    const urls = await startStandIns(Number(process.env.STACK_PORT ?? 8700));
    console.log("Local stand-ins (test/servers):");
    for (const [name, url] of Object.entries(urls)) console.log(`  ${name.padEnd(11)} ${url}`);
    console.log(`Models: local-extractive, ${STACK_MODELS.map((m) => m.id).join(", ")}`);
    process.exitCode = await start(process.argv.slice(2), stackVariables(urls));
  } catch (e) {
    console.error((e as Error).message);
    process.exitCode = 1;
  }
  process.exit();
}

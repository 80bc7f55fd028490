import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { startTestServers } from "./servers";

const root = path.join(import.meta.dirname, "..");

/** The workerd suite's projects, by test folder (every folder of test/ with Worker tests is in exactly one). */
export const WORKER_GROUPS: Record<string, string[]> = {
  "workers-core": ["foundation", "organizations", "lib", "billing", "skills", "artifacts", "retrieval", "console"],
  "workers-answers": ["documents", "chats", "tools", "embed", "memory"],
  "workers-tools": ["mcp", "connectors", "agents", "a2a", "tables", "protocols", "recovery"],
};

/**
 * Projects:
 * - `workers-core`, `workers-answers`, `workers-tools` (WORKER_GROUPS): the suite, inside workerd, with the
 *   local protocol servers;
 * - `paced`: the same Worker with local-extractive pacing its partial answers
 *   (LOCAL_MODEL_TOKEN_DELAY_MS) and fast heartbeats, so stop, replacement,
 *   disconnect and heartbeats are exercised deterministically (test/paced/);
 * - `lint`: the layer lint against scratch copies of src/ (test/lint/);
 * - `e2e`: Node tests that drive `wrangler dev` with a real browser (test/e2e/).
 */

/**
 * Each group's files share one module instance and one local D1 (Vitest's `isolate: false`) instead of a fresh
 * runtime per file: start-up, transform and setup are paid once per group, not once per file (measured on 2
 * cores: workers-core ~50 s instead of ~200 s, workers-answers ~41 s instead of ~134 s, workers-tools ~65 s
 * instead of ~185 s), which keeps `npm test` well within its 15 minutes. Their files create their own
 * organizations, keys and data and assume nothing about what other files left, nor about module state (a
 * file that needs a fresh instance goes to OWN_INSTANCE).
 */
const SHARED_INSTANCE = { isolate: false } as const;

/**
 * Test files that each run in a workerd instance of their own. A file that loads the heavy parsers (PDF.js,
 * mammoth, linkedom, the bombs) leaves its instance unable to take the next file: the pool's next message to
 * it is larger than the runner's WebSocket accepts ("Message is too large", @cloudflare/vitest-plugin 1.5.0)
 * and the instance exits, failing whichever file it ran next. Alone, each of these passes. The supervisor
 * wake's test needs the module state of a fresh instance (no alarm time learnt from other files' turns).
 */
const OWN_INSTANCE = [...["bounds", "parsers", "web", "processing"].map((f) => `test/documents/${f}.test.ts`), "test/recovery/wake.test.ts"];

/** Every folder of test/ that holds Worker tests must belong to one group, or its tests would silently not run. */
function assertGroupsCoverTests() {
  const grouped = new Set(Object.values(WORKER_GROUPS).flat());
  const own = new Set(["paced", "e2e", "bench", "servers", "lint"]);
  const missing = readdirSync(path.join(root, "test"), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !own.has(d.name) && !grouped.has(d.name))
    .filter((d) => readdirSync(path.join(root, "test", d.name)).some((f) => f.endsWith(".test.ts")))
    .map((d) => d.name);
  if (missing.length) throw new Error(`test/vitest.config.ts: add test/${missing.join(", test/")} to WORKER_GROUPS`);
}

/**
 * The Cloudflare pool (1.5.0) keeps its socket's message listener after `stop()`: a message that arrives
 * from workerd after a test file is done (a module fetched by background work — a `waitUntil`, an alarm, a
 * queue batch — still running in that file's instance) hits `assert(this.socket)` in the listener and the
 * uncaught AssertionError ("Message received from Worker before initialisation") kills the whole run.
 * Vitest's own pools drop a stopped worker's listeners; this does the same for the Cloudflare pool: by the
 * time `stop()` is called Vitest has its "stopped" answer, so nothing that arrives later is wanted.
 */
function dropLateMessages(plugin: ReturnType<typeof cloudflareTest>): ReturnType<typeof cloudflareTest> {
  type PoolWorker = { off(event: string, cb?: unknown): void; stop(): Promise<void> };
  type Runner = { createPoolWorker(options: unknown): PoolWorker };
  const configure = plugin.configureVitest as ((ctx: { project: { config: { poolRunner?: Runner } } }) => void) | undefined;
  if (!configure) throw new Error("@cloudflare/vitest-plugin: configureVitest is gone; revisit dropLateMessages");
  return {
    ...plugin,
    configureVitest(ctx: { project: { config: { poolRunner?: Runner } } }) {
      configure.call(plugin, ctx);
      const runner = ctx.project.config.poolRunner;
      if (!runner) throw new Error("@cloudflare/vitest-plugin: no pool runner; revisit dropLateMessages");
      const create = runner.createPoolWorker.bind(runner);
      runner.createPoolWorker = (options) => {
        const worker = create(options);
        const stop = worker.stop.bind(worker);
        worker.stop = () => {
          worker.off("message");
          return stop();
        };
        return worker;
      };
    },
  } as ReturnType<typeof cloudflareTest>;
}

/**
 * The Worker's static assets (the console and the Swagger files, dist/assets) are built by `npm test`'s
 * pretest; a run of single files with `npx vitest` builds them here (a no-op when they are newer than the
 * console's sources), since the pool would otherwise start and answer 404 for every asset.
 */
function ensureAssets() {
  const r = spawnSync(process.execPath, [path.join(root, "src/console/scripts/build-assets.mjs")], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error("npm run build:assets failed");
}

export default defineConfig(async () => {
  assertGroupsCoverTests();
  ensureAssets();
  const migrations = await readD1Migrations(path.join(root, "migrations"));
  // Local protocol servers (see test/servers); their URLs reach the Worker as TEST_SERVERS.
  const servers = await startTestServers();
  // The URL guard refuses private addresses; tests allow exactly the local web server (by IP and by name).
  const webPort = new URL(servers.web).port;
  // ... and the local MCP servers (test/servers/mcp.ts), by IP only.
  const mcpPort = new URL(servers.mcp).port;
  // The local A2A agent (test/servers/a2a.ts) is allowed the same way; other private addresses stay refused.
  const a2aPort = new URL(servers.a2a).port;
  // The copy of the web site whose robots.txt lists a gzip bomb (test/servers/web.ts), for the "bounds" project only.
  const bombsPort = new URL(servers["web-bombs"]).port;
  // Every connector talks to the local double of its provider (test/servers/connectors.ts).
  const connectorsPort = new URL(servers.connectors).port;
  const connectorSlugs = ["github", "google-drive", "notion", "slack", "linear", "jira"];

  const allowPrivate = `127.0.0.1:${webPort},localhost:${webPort},127.0.0.1:${connectorsPort},127.0.0.1:${mcpPort},127.0.0.1:${a2aPort}`;
  const workers = (extra: Record<string, string>) =>
    dropLateMessages(cloudflareTest({
      wrangler: { configPath: path.join(root, "wrangler.toml") },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: migrations,
          TEST_SERVERS: JSON.stringify(servers),
          ENVIRONMENT: "test",
          // Same code path as production with fewer PBKDF2 rounds, to keep the suite fast.
          PASSWORD_ITERATIONS: "1000",
          // Tests sign up many users from one address; the throttle has its own test.
          SIGNUP_THROTTLE_MAX: "0",
          // Registrations are counted in every test (the limit has its own test: test/mcp/registration-throttle.test.ts).
          OAUTH_REGISTER_THROTTLE_MAX: "1000",
          ALLOW_PRIVATE_URLS: allowPrivate,
          CONNECTORS: JSON.stringify(Object.fromEntries(connectorSlugs.map((s) => [s, { client_id: `${s}-client`, client_secret: `${s}-secret` }]))),
          CONNECTOR_ENDPOINTS: JSON.stringify(
            Object.fromEntries(
              connectorSlugs.map((s) => [
                s,
                { authorize_url: `${servers.connectors}/${s}/oauth/authorize`, token_url: `${servers.connectors}/${s}/oauth/token`, api_base_url: `${servers.connectors}/${s}/api` },
              ]),
            ),
          ),
          // Provider models point at the local OpenAI-compatible server (test/servers/openai.ts).
          OPENAI_BASE_URL: `${servers.openai}/v1`,
          OPENAI_API_KEY: "test-key",
          MODELS: JSON.stringify(
            ["test-gpt", "test-gpt-fail-mid-stream", "test-gpt-error-mid-stream", "test-gpt-error", "test-gpt-slow"].map((id) => ({
              id,
              context_window: 16000,
              pricing: { input_per_1k: 1, output_per_1k: 2 },
            })),
          ),
          ...extra,
        },
        // The suite makes many requests per caller; the limiter itself is tested with TEST_RATE_LIMITER
        // (3 requests a minute) in test/foundation/rate-limit.test.ts.
        ratelimits: {
          RATE_LIMITER: { namespace_id: "1001", simple: { limit: 1_000_000, period: 60 } },
          TEST_RATE_LIMITER: { namespace_id: "1002", simple: { limit: 3, period: 60 } },
        },
        // Deliver queued documents at once rather than after wrangler.toml's 1 s batch window.
        queueConsumers: { "kb-ingest": { maxBatchTimeout: 0.05 } },
      },
    }));

  const common = { root, setupFiles: ["test/setup.ts"], testTimeout: 30_000, hookTimeout: 30_000 };
  return {
    test: {
      projects: [
        // The suite inside workerd, in three projects (each its own workerd instance): one long-lived
        // instance for ~70 files died mid-run with "WebSocket protocol error: Message is too large" on its
        // test-runner connection, while the same files pass in smaller runs.
        ...Object.entries(WORKER_GROUPS).map(([name, dirs]) => ({
          plugins: [workers({ WEB_SEARCH_URL: `${servers.searx}/search` })],
          test: { ...common, name, include: dirs.map((d) => `test/${d}/**/*.test.ts`), exclude: OWN_INSTANCE, ...SHARED_INSTANCE },
        })),
        // The heavy-parser files and the wake's, one workerd instance each (OWN_INSTANCE above); the bombs' tests also reach
        // the copy of the web site whose robots.txt lists a gzip bomb.
        ...OWN_INSTANCE.map((file) => ({
          plugins: [workers({ WEB_SEARCH_URL: `${servers.searx}/search`, ALLOW_PRIVATE_URLS: `${allowPrivate},127.0.0.1:${bombsPort},localhost:${bombsPort}` })],
          test: { ...common, name: path.basename(file, ".test.ts"), include: [file] },
        })),
        {
          plugins: [workers({ LOCAL_MODEL_TOKEN_DELAY_MS: "25", SSE_HEARTBEAT_MS: "1000" })],
          test: { ...common, name: "paced", include: ["test/paced/**/*.test.ts"] },
        },
        // The layer lint's own test: scratch copies of src/ with deliberate violations (Node, no Worker).
        { test: { root, name: "lint", environment: "node", include: ["test/lint/**/*.test.ts"], testTimeout: 30_000 } },
        {
          test: {
            root,
            name: "e2e",
            environment: "node",
            include: ["test/e2e/**/*.test.ts"],
            testTimeout: 120_000,
            hookTimeout: 180_000,
          },
        },
      ],
    },
  };
});

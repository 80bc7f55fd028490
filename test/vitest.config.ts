import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { startTestServers } from "./servers";

const root = path.join(import.meta.dirname, "..");

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(root, "migrations"));
  // Local protocol servers (see test/servers); their URLs reach the Worker as TEST_SERVERS.
  const servers = await startTestServers();
  // The URL guard refuses private addresses; tests allow exactly the local web server (by IP and by name).
  const webPort = new URL(servers.web).port;
  return {
    plugins: [
      cloudflareTest({
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
            ALLOW_PRIVATE_URLS: `127.0.0.1:${webPort},localhost:${webPort}`,
            // Provider models point at the local OpenAI-compatible server (test/servers/openai.ts).
            OPENAI_BASE_URL: `${servers.openai}/v1`,
            OPENAI_API_KEY: "test-key",
            MODELS: JSON.stringify(
              ["test-gpt", "test-gpt-fail-mid-stream", "test-gpt-error", "test-gpt-slow"].map((id) => ({
                id,
                context_window: 16000,
                pricing: { input_per_1k: 1, output_per_1k: 2 },
              })),
            ),
          },
          // Deliver queued documents at once rather than after wrangler.toml's 1 s batch window.
          queueConsumers: { "kb-ingest": { maxBatchTimeout: 0.05 } },
        },
      }),
    ],
    test: {
      root,
      include: ["test/**/*.test.ts"],
      setupFiles: ["test/setup.ts"],
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
});

import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/**
 * `npm run bench:vectors`: measurements that print figures (no assertions on
 * time), run in the same Workers runtime as the tests but never by `npm test`.
 */
const root = path.join(import.meta.dirname, "../..");

export default defineConfig(async () => ({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: path.join(root, "wrangler.toml") },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations(path.join(root, "migrations")),
          TEST_SERVERS: "{}",
          ENVIRONMENT: "test",
          // The Workers runtime does not see this process's environment: the bench's size is passed in.
          BENCH_CHUNKS: process.env.BENCH_CHUNKS ?? "20000",
          // The default budget (64 MB) holds 130,055 vectors of 512 dimensions, past 32,768 as 8-bit integers;
          // LOCAL_VECTOR_INDEX_MAX_MB=1024 measures 100,000 of them as floats.
          ...(process.env.LOCAL_VECTOR_INDEX_MAX_MB ? { LOCAL_VECTOR_INDEX_MAX_MB: process.env.LOCAL_VECTOR_INDEX_MAX_MB } : {}),
        },
      },
    }),
  ],
  test: {
    root,
    include: ["test/bench/**/*.bench.ts"],
    setupFiles: ["test/setup.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
}));

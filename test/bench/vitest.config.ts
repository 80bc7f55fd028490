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
          // Past the default 64 MB (32,768 vectors of 512 dimensions) vectors are stored but not held: the bench
          // measures the index at the size it is asked for.
          LOCAL_VECTOR_INDEX_MAX_MB: "1024",
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

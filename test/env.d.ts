// Test-only binding injected by test/vitest.config.ts.
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** JSON map of test server name -> base URL (test/servers). */
    TEST_SERVERS: string;
  }
}

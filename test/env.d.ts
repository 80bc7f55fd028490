// Test-only binding injected by test/vitest.config.ts.
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** JSON map of test server name -> base URL (test/servers). */
    TEST_SERVERS: string;
    /** A RATE_LIMITER stand-in that allows 3 requests a minute per key. */
    TEST_RATE_LIMITER: RateLimit;
  }
}

// Vite's `?raw` imports (a file's text), e.g. the console's generated API types.
declare module "*?raw" {
  const text: string;
  export default text;
}

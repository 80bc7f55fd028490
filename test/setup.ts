import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Setup files run before each test file; applyD1Migrations only applies what is missing.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

/*
 * The SDKs the service imports lazily (to keep the Worker's start-up small), loaded before the file's tests: a
 * group's files share one module instance (test/vitest.config.ts), and a lazy import made by a file's background
 * work after that file was done ("Cannot load … after the environment was torn down") would leave the module
 * broken for every file after it. Loaded here, they are in the instance's module cache before any test runs.
 * The heavy parsers (linkedom, PDF.js, mammoth) are not: their test files run in instances of their own.
 */
await Promise.all([
  import("ai"),
  import("@ai-sdk/openai"),
  import("@a2a-js/sdk"),
  import("@a2a-js/sdk/client"),
  import("@a2a-js/sdk/server"),
  import("@a2a-js/sdk/errors"),
  import("@a2a-js/sdk/compat/v0_3"),
  import("@a2a-js/sdk/compat/v0_3/server"),
  import("@modelcontextprotocol/sdk/client/index.js"),
  import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  import("@modelcontextprotocol/sdk/client/sse.js"),
  import("@modelcontextprotocol/sdk/client/auth.js"),
  import("@modelcontextprotocol/sdk/validation/cfworker"),
  import("@modelcontextprotocol/sdk/server/mcp.js"),
  import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
]);

/**
 * `npm run console:api`: regenerates the console's typed API client types (src/console/api/schema.d.ts)
 * from the app's OpenAPI document, with openapi-typescript. The document comes from a `wrangler dev` started
 * here on a free port (or from a running server: `npm run console:api -- http://localhost:8787`). The file's
 * first line records the document's SHA-256 (without `servers`), which test/console/api-schema.test.ts checks
 * against the document the Worker serves: a route change without a regenerated client fails the suite.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "../../../test/e2e/browser-helpers.ts";
import { root, startDevServer } from "../../../test/bench/lib.ts";
import { documentHash, generateSchema } from "./openapi-types.ts";

const existing = process.argv[2];
const server = await startDevServer({ port: existing ? 0 : await freePort(), existing });
try {
  const res = await fetch(`${server.base}/openapi.json`);
  if (!res.ok) throw new Error(`GET /openapi.json -> ${res.status}`);
  const doc = (await res.json()) as Record<string, unknown>;
  const out = path.join(root, "src/console/api/schema.d.ts");
  writeFileSync(out, await generateSchema(doc));
  console.log(`wrote ${path.relative(root, out)} (document sha256 ${await documentHash(doc)})`);
} finally {
  await server.stop();
}

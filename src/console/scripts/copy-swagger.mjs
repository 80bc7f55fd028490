// Copies the Swagger UI files the Worker serves at /swagger/* into the static assets folder, next to the
// console's build (dist/assets/console/): one assets folder per Worker (wrangler.toml [assets]).
import { cpSync, mkdirSync } from "node:fs";
import path from "node:path";

const root = path.join(import.meta.dirname, "../../..");
const from = path.join(root, "node_modules/swagger-ui-dist");
const to = path.join(root, "dist/assets/swagger");
mkdirSync(to, { recursive: true });
for (const file of ["swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"]) cpSync(path.join(from, file), path.join(to, file));

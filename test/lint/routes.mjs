// npm run lint: routes never query the database themselves (STYLE.md, "Data access").
// A file under src/routes/ fails when it imports
//   - drizzle-orm (any entry point), or src/db/client (the database handle), or
//   - a value from src/db/schema other than an UPPER_CASE constant (the enum
//     lists the zod schemas reuse, e.g. DOCUMENT_STATUSES): tables are
//     camelCase values and are for services only.
// Type-only imports of row types (`import type { Artifact }`, `type Tenant`) are
// allowed: they describe data a service returned and cannot run a query.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");
const routes = join(root, "src/routes");

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(ts|tsx|js|mjs)$/.test(name)) yield p;
  }
}

const IMPORT = /import\s+(type\s+)?([\s\S]*?)\s+from\s+["']([^"']+)["']/g;
const problems = [];
for (const file of files(routes)) {
  const src = readFileSync(file, "utf8");
  const rel = relative(root, file);
  for (const m of src.matchAll(IMPORT)) {
    const [, typeOnly, clause, spec] = m;
    const line = src.slice(0, m.index).split("\n").length;
    const where = `${rel}:${line}`;
    if (spec === "drizzle-orm" || spec.startsWith("drizzle-orm/")) {
      problems.push(`${where} imports ${spec}: move the query into a service (src/services/)`);
      continue;
    }
    const target = resolve(join(file, ".."), spec);
    if (!spec.startsWith(".")) continue;
    if (target === join(root, "src/db/client")) {
      if (!typeOnly) problems.push(`${where} imports the database client: routes call services instead`);
      continue;
    }
    if (target !== join(root, "src/db/schema") && !target.startsWith(join(root, "src/db/schema/"))) continue;
    if (typeOnly) continue;
    const names = (clause.match(/\{([\s\S]*)\}/)?.[1] ?? clause)
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .filter((s) => !s.startsWith("type "))
      .map((s) => s.split(/\s+as\s+/)[0].replace(/^\*\s*/, "*"));
    for (const name of names) {
      if (!/^[A-Z][A-Z0-9_]*$/.test(name)) {
        problems.push(`${where} imports '${name}' from src/db/schema: tables are for services; import types with 'import type'`);
      }
    }
  }
}

if (problems.length) {
  console.error(`lint: ${problems.length} problem(s)\n` + problems.map((p) => `  ${p}`).join("\n"));
  process.exit(1);
}
console.log("lint: src/routes imports no drizzle-orm, no database client and no schema tables");

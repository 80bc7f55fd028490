// npm run lint, part two: the layers of src/ only point down, and no import cycle (README "Project layout").
//
//   node test/lint/layers.mjs [--root <dir>] [--report]
//
// Reads every .ts file under <root>/src (the console excepted: its own tsconfig, its own world) with the
// TypeScript 5 compiler API (the `typescript-5` alias package; TypeScript 7 has no JS API), takes every
// import, re-export, dynamic import() and `import("…")` type, resolves relative specifiers to files, and checks:
//   - services never import routes, Durable Objects, `hono` or src/capabilities.ts;
//   - the answer pipeline imports no capability, and capabilities never import the pipeline;
//   - the contract layer (src/contracts/) imports neither, nor any other service;
//   - storage and lib (src/db/, src/lib/) import nothing above them;
//   - no import cycle, runtime or type-only.
// `--report` prints the figures (cycles, upward arrows between folders) even when the rules pass.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript-5";

const args = process.argv.slice(2);
const rootArg = args.indexOf("--root");
const root = resolve(rootArg >= 0 ? args[rootArg + 1] : join(import.meta.dirname, "../.."));
const report = args.includes("--report");

// ---- Layers ----------------------------------------------------------------------------------------------
// From the bottom: storage/lib (0) < contracts (1) < services (2) < pipeline | capabilities (3, siblings that
// never import each other) < drivers (4: services that run turns) < entry (5). An arrow may point down or
// sideways within a layer; one that points up is counted (and, for the rules below, refused).
// The answer pipeline: the turn's stages, and the writes that record a turn's answer.
const PIPELINE = [/^src\/services\/answer\//, /^src\/services\/chats\/answer-record\.ts$/];
// Capabilities: the providers a turn is given (TurnDeps.capabilities), with the folders that exist for them.
// Tables and memory are also plain services (loaded by ingestion, browsed by routes): only their turn
// providers count here.
const CAPABILITIES = [
  /^src\/services\/(connectors|mcp|delegation|a2a|tools)\//,
  /^src\/services\/(tables\/tool|memory\/turn|agents\/hook)\.ts$/,
];
// Drivers: services that start turns (chat sends, fast-query, agent runs, the OpenAI-compatible API, the
// A2A and MCP servers).
const DRIVERS = [
  /^src\/services\/chats\/(create|queries|turns|session|search-ahead)\.ts$/,
  /^src\/services\/(agents|openai)\//,
  /^src\/services\/a2a\/(server|rpc)\.ts$/,
  /^src\/services\/mcp\/kb-server\.ts$/,
];
// HTTP adapters: Hono's side of things (the router, the middleware, the error handler, AppEnv).
const HTTP = [
  /^src\/types\.ts$/,
  /^src\/auth\/(middleware|embed|rate-limit|route-permission)\.ts$/,
  /^src\/lib\/(router|error-handler|cors|swagger|console|openapi)\.ts$/,
];
const is = (patterns, f) => patterns.some((p) => p.test(f));

/** A file's layer; the rank orders them from the bottom (0) up. */
export function layerOf(f) {
  if (is(HTTP, f)) return { name: "entry", rank: 5 };
  if (/^src\/(lib|db)\//.test(f) || f === "src/env.ts") return { name: "storage/lib", rank: 0 };
  if (/^src\/contracts\//.test(f)) return { name: "contracts", rank: 1 };
  if (is(PIPELINE, f)) return { name: "pipeline", rank: 3 };
  if (is(DRIVERS, f)) return { name: "drivers", rank: 4 };
  if (is(CAPABILITIES, f)) return { name: "capabilities", rank: 3 };
  if (/^src\/(services|auth)\//.test(f)) return { name: "services", rank: 2 };
  return { name: "entry", rank: 5 }; // index.ts, app.ts, capabilities.ts, routes/, durable/
}

// ---- Reading the imports ------------------------------------------------------------------------------------
function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (relative(root, p) !== join("src", "console")) yield* files(p);
    } else if (/\.ts$/.test(name) && !name.endsWith(".d.ts")) yield p;
  }
}

function resolveSpec(from, spec) {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec);
  for (const c of [base, `${base}.ts`, join(base, "index.ts")]) if (existsSync(c) && statSync(c).isFile()) return c;
  const js = base.replace(/\.js$/, ".ts");
  return existsSync(js) ? js : null;
}

/** Every import of a file: { spec, typeOnly, line }. */
function importsOf(file) {
  const text = readFileSync(file, "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out = [];
  const line = (node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const cl = node.importClause;
      let typeOnly = Boolean(cl?.isTypeOnly);
      if (cl && !typeOnly && !cl.name && cl.namedBindings && ts.isNamedImports(cl.namedBindings)) {
        const els = cl.namedBindings.elements;
        typeOnly = els.length > 0 && els.every((e) => e.isTypeOnly);
      }
      out.push({ spec: node.moduleSpecifier.text, typeOnly, line: line(node) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      let typeOnly = node.isTypeOnly;
      if (!typeOnly && node.exportClause && ts.isNamedExports(node.exportClause)) {
        const els = node.exportClause.elements;
        typeOnly = els.length > 0 && els.every((e) => e.isTypeOnly);
      }
      out.push({ spec: node.moduleSpecifier.text, typeOnly, line: line(node) });
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) out.push({ spec: arg.literal.text, typeOnly: true, line: line(node) });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [a] = node.arguments;
      if (a && ts.isStringLiteralLike(a)) out.push({ spec: a.text, typeOnly: false, line: line(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The graph: file -> [{ to, external, typeOnly, line }]. */
export function readGraph() {
  const graph = new Map();
  for (const abs of files(join(root, "src"))) {
    const f = relative(root, abs);
    const edges = [];
    for (const imp of importsOf(abs)) {
      const target = resolveSpec(abs, imp.spec);
      if (target) edges.push({ to: relative(root, target), typeOnly: imp.typeOnly, line: imp.line });
      else if (!imp.spec.startsWith(".")) edges.push({ external: imp.spec, typeOnly: imp.typeOnly, line: imp.line });
    }
    graph.set(f, edges);
  }
  return graph;
}

// ---- Rules --------------------------------------------------------------------------------------------------
function ruleProblems(graph) {
  const problems = [];
  for (const [f, edges] of graph) {
    const from = layerOf(f);
    const isService = /^src\/services\//.test(f);
    for (const e of edges) {
      const where = `${f}:${e.line}`;
      if (e.external) {
        if ((isService || from.name === "contracts" || from.rank === 0) && (e.external === "hono" || e.external.startsWith("hono/") || e.external.startsWith("@hono/")))
          problems.push(`${where} imports ${e.external}: services take a ServiceContext, never Hono's`);
        continue;
      }
      const to = layerOf(e.to);
      if (isService || from.name === "contracts" || from.rank === 0) {
        if (/^src\/routes\//.test(e.to)) problems.push(`${where} imports a route (${e.to})`);
        else if (/^src\/durable\//.test(e.to)) problems.push(`${where} imports a Durable Object (${e.to}): import its protocol from src/contracts/`);
        else if (e.to === "src/capabilities.ts") problems.push(`${where} imports the capability registry: entry points pass it in`);
        else if (e.to === "src/app.ts" || e.to === "src/index.ts") problems.push(`${where} imports an entry point (${e.to})`);
      }
      if (from.name === "pipeline" && to.name === "capabilities") problems.push(`${where} (pipeline) imports a capability (${e.to}): take it from TurnDeps.capabilities`);
      if (from.name === "capabilities" && to.name === "pipeline") problems.push(`${where} (capability) imports the pipeline (${e.to}): use src/contracts/`);
      if (from.name === "contracts" && to.rank > 1) problems.push(`${where} (contracts) imports ${to.name} (${e.to}): contracts import only storage and lib`);
      if (from.rank === 0 && to.rank > 0) problems.push(`${where} (storage/lib) imports ${to.name} (${e.to})`);
    }
  }
  return problems;
}

/** Strongly connected components with more than one file (or a file importing itself), by Tarjan. */
export function cycles(graph, { runtimeOnly }) {
  let index = 0;
  const idx = new Map(), low = new Map(), on = new Set(), stack = [], out = [];
  const next = (f) => (graph.get(f) ?? []).filter((e) => e.to && (!runtimeOnly || !e.typeOnly)).map((e) => e.to);
  const strong = (v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v);
    for (const w of next(v)) {
      if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); on.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1 || next(v).includes(v)) out.push(comp.sort());
    }
  };
  for (const f of graph.keys()) if (!idx.has(f)) strong(f);
  return out.map((comp) => ({ files: comp, example: exampleCycle(comp, next) }));
}

/** One concrete loop through a component, for the message (shortest from its first file). */
function exampleCycle(comp, next) {
  const inComp = new Set(comp), start = comp[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of next(v)) {
      if (!inComp.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = prev.get(x)) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!prev.has(w)) { prev.set(w, v); queue.push(w); }
    }
  }
  return comp;
}

/** Arrows between folders (src/<top>/<folder>), and those that point up a layer. */
function folderArrows(graph) {
  const folder = (f) => f.split("/").slice(0, f.startsWith("src/services/") ? 3 : 2).join("/").replace(/\.ts$/, "");
  const arrows = new Set(), upward = new Set();
  for (const [f, edges] of graph)
    for (const e of edges) {
      if (!e.to || folder(f) === folder(e.to)) continue;
      const key = `${folder(f)} -> ${folder(e.to)}`;
      arrows.add(key);
      if (layerOf(e.to).rank > layerOf(f).rank) upward.add(key);
    }
  return { arrows: arrows.size, upward: [...upward].sort() };
}

// ---- Main ---------------------------------------------------------------------------------------------------
// test/lint/layers-baseline.txt: problems known when the lint was written, one per line (without line
// numbers), to be worked off. A problem not listed fails the lint; so does a listed one that is gone (delete
// its line), so the list only shrinks.
const baselineFile = join(import.meta.dirname, "layers-baseline.txt");
const baseline = new Set(
  existsSync(baselineFile) ? readFileSync(baselineFile, "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#")) : [],
);
const graph = readGraph();
const problems = ruleProblems(graph);
const all = cycles(graph, { runtimeOnly: false });
const runtime = cycles(graph, { runtimeOnly: true });
for (const c of runtime) problems.push(`import cycle (runtime) of ${c.files.length} files: ${c.example.join(" -> ")}`);
for (const c of all) problems.push(`import cycle (counting type imports) of ${c.files.length} files: ${c.example.join(" -> ")}`);
const { arrows, upward } = folderArrows(graph);
const key = (p) => p.replace(/^(src\/[^:]+):\d+/, "$1");
const fresh = problems.filter((p) => !baseline.has(key(p)));
const seen = new Set(problems.map(key));
const gone = [...baseline].filter((b) => !seen.has(b));
console.log(
  `layers: ${graph.size} files; import cycles: ${runtime.length} runtime, ${all.length} counting type imports` +
    ` (largest ${Math.max(0, ...all.map((c) => c.files.length))} files); arrows between folders: ${arrows}, upward: ${upward.length};` +
    ` known problems left: ${baseline.size - gone.length}`,
);
if (report) {
  for (const u of upward) console.log(`  upward: ${u}`);
  for (const p of problems) console.log(`  ${p}`);
}
if (process.argv.includes("--write-baseline")) {
  const { writeFileSync } = await import("node:fs");
  writeFileSync(baselineFile, "# Known layer problems (test/lint/layers.mjs), to be worked off; the lint fails on any other.\n" + [...new Set(problems.map(key))].sort().join("\n") + "\n");
  console.log(`wrote ${baselineFile}`);
  process.exit(0);
}
if (fresh.length || gone.length) {
  if (fresh.length) console.error(`lint: ${fresh.length} layer problem(s)\n` + fresh.map((p) => `  ${p}`).join("\n"));
  if (gone.length) console.error(`lint: ${gone.length} known problem(s) fixed: delete their lines from test/lint/layers-baseline.txt\n` + gone.map((p) => `  ${p}`).join("\n"));
  process.exit(1);
}
console.log("lint: layers point down (services see no route, Durable Object, Hono or capability registry); no new import cycle");

/**
 * `npm start`: the service under `wrangler dev`, quietly and offline.
 *
 *   npm start                      http://localhost:8787, state in .wrangler/state
 *   npm start -- --port 8801       any `wrangler dev` flag is passed on (--port, --persist-to, --var NAME:value, ...)
 *   MODELS='[...]' npm start       configuration from the environment (see below)
 *
 * What it does, in order:
 * 1. writes a development ENCRYPTION_KEY into `.dev.vars` when there is none;
 * 2. applies the local D1 migrations (to `--persist-to` when given) and prints the result once;
 * 3. starts `wrangler dev` with wrangler's network calls off (usage metrics, the `Request.cf` download from
 *    workers.cloudflare.com), so an offline machine prints no `getaddrinfo ENOTFOUND` stack traces.
 *
 * Configuration is read the same way from every source, later ones winning: `wrangler.toml` [vars] <
 * `.dev.vars` < the environment (every variable named in src/env.ts, e.g. `MODELS`, `OPENAI_API_KEY`) <
 * `--var NAME:value`. The first three are merged into `.wrangler/dev.env`, handed to wrangler as its env file,
 * so every value is a secret to wrangler (shown as "(hidden)", never printed). With `--port` and no
 * PUBLIC_BASE_URL, links (upload URLs, share pages) point at that port.
 *
 * Run by Node 22 directly (type stripping): only erasable TypeScript here.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export const root = path.join(import.meta.dirname, "../..");

/** Keeps wrangler and miniflare off the network: no metrics, no `Request.cf` download (a placeholder is used). */
export const OFFLINE_ENV = { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

/** The configuration variables the Worker reads: every optional string member of `Env` in src/env.ts. */
export function knownVariables(): string[] {
  const source = readFileSync(path.join(root, "src/env.ts"), "utf8");
  return [...source.matchAll(/^\s+([A-Z][A-Z0-9_]*)\?: string;/gm)].map((m) => m[1]);
}

/** `NAME=value` lines of a dotenv file (quotes removed; comments and blank lines skipped). */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith("#")) continue;
    let value = m[2];
    if (/^(['"]).*\1$/.test(value)) value = value.slice(1, -1);
    out[m[1]] = value;
  }
  return out;
}

/** One dotenv line, quoted with a quote the value does not hold (dotenv keeps ' and ` quoted values as they are). */
function dotenvLine(name: string, value: string): string {
  const v = value.replace(/\r?\n/g, " ");
  const quote = ["'", "`", '"'].find((q) => !v.includes(q)) ?? "'";
  return `${name}=${quote}${v}${quote}`;
}

/** Step 1: a development ENCRYPTION_KEY in .dev.vars (stored credentials are sealed with it). */
export function ensureDevSecrets(): void {
  const file = path.join(root, ".dev.vars");
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  if (/^ENCRYPTION_KEY=/m.test(text)) return;
  appendFileSync(file, `${text && !text.endsWith("\n") ? "\n" : ""}ENCRYPTION_KEY=${randomBytes(32).toString("base64")}\n`);
  console.log("Wrote a development ENCRYPTION_KEY to .dev.vars");
}

/** The value of a `--flag value` or `--flag=value` argument. */
export function flagValue(args: string[], flag: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag) return args[i + 1];
    if (args[i].startsWith(`${flag}=`)) return args[i].slice(flag.length + 1);
  }
  return undefined;
}

/**
 * Step 2: applies the migrations and prints one line per migration applied (wrangler itself redraws its
 * table after every file). The whole output is shown only when it fails.
 */
export function migrate(persistTo: string | undefined, env: NodeJS.ProcessEnv): void {
  const args = ["wrangler", "d1", "migrations", "apply", "DB", "--local", ...(persistTo ? ["--persist-to", persistTo] : [])];
  const r = spawnSync("npx", args, { cwd: root, env, encoding: "utf8" });
  const output = `${r.stdout}\n${r.stderr}`;
  if (r.status !== 0) {
    process.stderr.write(output);
    throw new Error("the local D1 migrations failed (output above)");
  }
  const applied = [...new Set([...output.matchAll(/│\s*(\d{4}_[\w-]+\.sql)\s*│\s*✅/g)].map((m) => m[1]))];
  if (applied.length) console.log(`Applied ${applied.length} migration(s) to the local database: ${applied.join(", ")}`);
  else console.log("Local database: migrations up to date");
}

/** Step 3's env file: .dev.vars, then the known variables set in the environment, then `extra`. */
export function writeEnvFile(extra: Record<string, string>, args: string[]): string {
  const devVarsFile = path.join(root, ".dev.vars");
  const merged: Record<string, string> = existsSync(devVarsFile) ? parseDotenv(readFileSync(devVarsFile, "utf8")) : {};
  const fromEnvironment: string[] = [];
  for (const name of knownVariables()) {
    const value = process.env[name];
    if (value === undefined || value === "") continue;
    merged[name] = value;
    fromEnvironment.push(name);
  }
  Object.assign(merged, extra);
  const port = flagValue(args, "--port");
  if (port && !merged.PUBLIC_BASE_URL) {
    merged.PUBLIC_BASE_URL = `http://localhost:${port}`;
    merged.ALLOWED_ORIGINS ??= `http://localhost:${port},http://127.0.0.1:${port}`;
  }
  if (fromEnvironment.length) console.log(`From the environment: ${fromEnvironment.join(", ")}`);
  const file = path.join(root, ".wrangler", "dev.env");
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, Object.entries(merged).map(([k, v]) => dotenvLine(k, v)).join("\n") + "\n", { mode: 0o600 });
  return file;
}

/**
 * Runs the three steps and `wrangler dev` in the foreground; resolves with its exit code. `extra` is
 * configuration of the caller's own (dev:stack), applied over .dev.vars and the environment.
 */
export async function start(args: string[], extra: Record<string, string> = {}): Promise<number> {
  const env = { ...process.env, ...OFFLINE_ENV };
  ensureDevSecrets();
  migrate(flagValue(args, "--persist-to"), env);
  const envFile = writeEnvFile(extra, args);
  const child = spawn("npx", ["wrangler", "dev", "--env-file", envFile, ...args], { cwd: root, env, stdio: "inherit" });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

if (import.meta.main) {
  try {
    process.exitCode = await start(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    process.exitCode = 1;
  }
}

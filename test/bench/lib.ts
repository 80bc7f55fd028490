/**
 * Shared by the Node benchmark scripts (bench:ingest, bench:stream,
 * eval:retrieval) and the browser test: start a local `wrangler dev` on its own
 * port and state directory, wait for it, call the API, stop it. Run by Node 22
 * directly (type stripping): only erasable TypeScript here.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export const root = path.join(import.meta.dirname, "../..");

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function waitForServer(base: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      /* not up yet */
    }
    await sleep(300);
  }
  throw new Error(`the server at ${base} did not come up within ${timeoutMs / 1000} s`);
}

/**
 * Applies the migrations to `stateDir` and starts `wrangler dev` there, in a
 * process group of its own (so stopping it also stops workerd). `vars` are
 * passed with --var (they override wrangler.toml [vars] and .dev.vars).
 */
export function startServer(stateDir: string, port: number, vars: Record<string, string> = {}): ChildProcess {
  // wrangler dev records a trace of every invocation for its local explorer by
  // default (a development aid production does not have): off, so figures
  // measure the service.
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? "false" };
  const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir], { cwd: root, env, encoding: "utf8" });
  if (migrate.status !== 0) throw new Error(`migrations failed:\n${migrate.stdout}\n${migrate.stderr}`);
  const base = `http://127.0.0.1:${port}`;
  // One benchmark caller makes far more requests than a real one's budget
  // (RATE_LIMITER, 300 per 10 s): the figures measure the service, not the limiter.
  const all: Record<string, string> = { PUBLIC_BASE_URL: base, SIGNUP_THROTTLE_MAX: "0", RATE_LIMITS: "off", ...vars };
  const args = ["wrangler", "dev", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", stateDir];
  for (const [k, v] of Object.entries(all)) args.push("--var", `${k}:${v}`);
  // BENCH_INSPECTOR_PORT=<port>: the runtime's DevTools endpoint (bench:profile takes CPU profiles through it).
  if (process.env.BENCH_INSPECTOR_PORT) args.push("--inspector-port", process.env.BENCH_INSPECTOR_PORT);
  return spawn("npx", args, { cwd: root, env, detached: true, stdio: ["ignore", process.env.BENCH_DEV_LOG ? "pipe" : "ignore", "pipe"] });
}

/** A throwaway state directory, in memory (/dev/shm) when the machine has one: the figures are not about the disk. */
export function scratchDir(prefix: string): string {
  const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  return mkdtempSync(path.join(base, prefix));
}

export async function stopServer(server: ChildProcess | null): Promise<void> {
  if (!server?.pid) return;
  try {
    process.kill(-server.pid, "SIGTERM");
  } catch {
    /* already gone */
  }
  await sleep(500);
  try {
    process.kill(-server.pid, "SIGKILL");
  } catch {
    /* already gone */
  }
}

export interface ApiAuth {
  cookie?: string;
  key?: string;
}

export async function api(base: string, p: string, init: ApiAuth & { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${base}/api/v1${p}`, {
    method: init.method ?? (init.body ? "POST" : "GET"),
    headers: {
      ...(init.body ? { "Content-Type": "application/json" } : {}),
      ...(init.cookie ? { Cookie: init.cookie } : {}),
      ...(init.key ? { Authorization: `Bearer ${init.key}` } : {}),
    },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? (init.body ? "POST" : "GET")} ${p} -> ${res.status}: ${text.slice(0, 500)}`);
  return { body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** A new user, organization (with its default tenant) and knowledge base. */
export async function setUpKnowledgeBase(base: string, name: string) {
  const email = `${name}-${Date.now()}@example.com`;
  const signup = await api(base, "/auth/signup", { body: { email, password: "benchmark-password-1", name } });
  const cookie = /kb_session=[^;]+/.exec(signup.headers.get("set-cookie") ?? "")?.[0];
  if (!cookie) throw new Error("no session cookie");
  const org = (await api(base, "/organizations", { cookie, body: { name, slug: `${name}-${Date.now()}` } })).body;
  const tenantId = org.default_tenant_id as string;
  const kb = (await api(base, "/knowledge-bases", { cookie, body: { tenant_id: tenantId, name } })).body;
  return { cookie, org, tenantId, kb: kb as { id: string; tenant_id: string }, kbId: kb.id as string, envId: org.default_environment_id as string };
}

export interface DevServer {
  base: string;
  stop(): Promise<void>;
  /** The process group of the dev server (its leader's pid), for CPU accounting (bench:cpu). */
  pid?: number;
}

/** startServer + waitForServer with cleanup of the state directory; or `existing` (a running server's URL). */
export async function startDevServer(opts: { port: number; vars?: Record<string, string>; existing?: string }): Promise<DevServer> {
  if (opts.existing) {
    const base = opts.existing.replace(/\/+$/, "");
    await waitForServer(base, 10_000);
    return { base, stop: async () => {} };
  }
  const stateDir = scratchDir("kb-dev-");
  const child = startServer(stateDir, opts.port, opts.vars);
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  // BENCH_DEV_LOG=<file>: the dev server's own output (its console.log lines), for looking into a figure.
  if (process.env.BENCH_DEV_LOG) child.stdout?.pipe(createWriteStream(process.env.BENCH_DEV_LOG));
  const base = `http://127.0.0.1:${opts.port}`;
  const stop = async () => {
    await stopServer(child);
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    await waitForServer(base, 90_000);
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  return { base, stop, pid: child.pid };
}

/** Uploads a Markdown document through presign + PUT and waits until it is processed. */
export async function uploadAndWait(base: string, auth: ApiAuth, kb: { id: string; tenant_id: string }, filename: string, text: string) {
  const bytes = new TextEncoder().encode(text);
  const p = (await api(base, "/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: kb.tenant_id, filename, mime_type: "text/markdown", size_bytes: bytes.byteLength } })).body;
  const put = await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: bytes });
  if (!put.ok) throw new Error(`upload -> ${put.status}: ${await put.text()}`);
  for (let i = 0; i < 300; i++) {
    const s = (await api(base, `/documents/status?document_id=${p.document_id}`, auth)).body;
    if (s.status === "processed") return p.document_id as string;
    if (s.status === "failed") throw new Error(`processing failed: ${s.error}`);
    await sleep(100);
  }
  throw new Error("document not processed in time");
}

/**
 * A `wrangler dev` whose provider model `bench-model` is the OpenAI-compatible server at `modelUrl`, with an
 * organization funded for the benchmark, a knowledge base holding the handbook and a `query:rag` API key.
 */
export async function startModelBench(opts: { port: number; modelUrl: string; name: string }) {
  const server = await startDevServer({
    port: opts.port,
    vars: { OPENAI_BASE_URL: opts.modelUrl, OPENAI_API_KEY: "bench", MODELS: JSON.stringify([{ id: "bench-model", context_window: 16000, pricing: { input_per_1k: 0.1, output_per_1k: 0.1 } }]) },
  });
  try {
    const { cookie, kb, org, envId } = await setUpKnowledgeBase(server.base, opts.name);
    await api(server.base, `/billing/organizations/${org.id}/credits`, { cookie, body: { amount: 100_000 } });
    await uploadAndWait(server.base, { cookie }, kb, "handbook.md", "# Handbook\n\n## Refunds\nRefunds are paid within 5 business days of the request.\n");
    const key = (await api(server.base, `/environments/${envId}/api-keys`, { cookie, body: { name: "bench", scopes: ["query:rag"] } })).body.key as string;
    return { server, kb, key };
  } catch (e) {
    await server.stop();
    throw e;
  }
}

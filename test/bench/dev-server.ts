/**
 * A local `wrangler dev` for benchmarks and the browser test: its own port and
 * state directory (migrations applied first), its own process group so that
 * stopping it also stops workerd, plus a tiny client for the public API.
 * Only erasable TypeScript here: benchmarks run on Node 22 type stripping.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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

export interface DevServer {
  base: string;
  stop(): Promise<void>;
}

/** Starts wrangler dev on 127.0.0.1:`port` with extra `vars`, or uses `existing` (BENCH_URL). */
export async function startDevServer(opts: { port: number; vars?: Record<string, string>; existing?: string }): Promise<DevServer> {
  if (opts.existing) {
    const base = opts.existing.replace(/\/+$/, "");
    await waitForServer(base, 10_000);
    return { base, stop: async () => {} };
  }
  const stateDir = mkdtempSync(path.join(tmpdir(), "kb-dev-"));
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };
  const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir], { cwd: root, env, encoding: "utf8" });
  if (migrate.status !== 0) throw new Error(`migrations failed:\n${migrate.stdout}\n${migrate.stderr}`);
  const base = `http://127.0.0.1:${opts.port}`;
  const vars = { PUBLIC_BASE_URL: base, SIGNUP_THROTTLE_MAX: "0", ...opts.vars };
  const args = ["wrangler", "dev", "--port", String(opts.port), "--ip", "127.0.0.1", "--persist-to", stateDir];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child: ChildProcess = spawn("npx", args, { cwd: root, env, detached: true, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  const stop = async () => {
    if (child.pid) {
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        try {
          process.kill(-child.pid, signal);
        } catch {
          /* already gone */
        }
        await sleep(400);
      }
    }
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    await waitForServer(base, 90_000);
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  return { base, stop };
}

/** Calls the public API; throws on a non-2xx answer. */
export async function api(base: string, p: string, init: { method?: string; cookie?: string; key?: string; body?: unknown } = {}) {
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
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${p} -> ${res.status}: ${text}`);
  return { body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** Signs up a fresh user and creates an organization and a knowledge base. */
export async function bootstrap(base: string, name = "bench") {
  const email = `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.com`;
  const signup = await api(base, "/auth/signup", { body: { email, password: "benchmark-password-1", name } });
  const cookie = /kb_session=[^;]+/.exec(signup.headers.get("set-cookie") ?? "")?.[0];
  if (!cookie) throw new Error("no session cookie");
  const org = (await api(base, "/organizations", { cookie, body: { name, slug: `${name}-${Date.now()}` } })).body;
  const tenantId = org.default_tenant_id as string;
  const kb = (await api(base, "/knowledge-bases", { cookie, body: { tenant_id: tenantId, name } })).body;
  return { cookie, org, tenantId, kb };
}

/** Uploads a text document through presign + PUT and waits until it is processed. */
export async function uploadAndWait(base: string, cookie: string, kb: { id: string; tenant_id: string }, filename: string, text: string) {
  const bytes = new TextEncoder().encode(text);
  const p = (await api(base, "/documents/presign", { cookie, body: { kb_id: kb.id, tenant_id: kb.tenant_id, filename, mime_type: "text/markdown", size_bytes: bytes.byteLength } })).body;
  const put = await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: bytes });
  if (!put.ok) throw new Error(`upload -> ${put.status}: ${await put.text()}`);
  for (let i = 0; i < 300; i++) {
    const s = (await api(base, `/documents/status?document_id=${p.document_id}`, { cookie })).body;
    if (s.status === "processed") return p.document_id as string;
    if (s.status === "failed") throw new Error(`processing failed: ${s.error}`);
    await sleep(100);
  }
  throw new Error("document not processed in time");
}

/**
 * `npm run seed`: against a running service (BASE, default http://localhost:8787) makes sure there is a user,
 * an organization, an API key with every scope and a knowledge base with two processed documents, and prints
 * `export` lines for the README's variables on stdout (progress goes to stderr):
 *
 *   eval "$(npm run -s seed)"          # BASE API COOKIE ORG_ID ENV_ID TENANT_ID KEY AUTH KB_ID DOC_ID, and json()
 *   npm run seed -- --reset            # a new user, organization, key and knowledge base (fresh names); with the
 *                                      # service stopped: wipes the local state (.wrangler/state) instead
 *
 * Idempotent: a second run reuses what exists (remembered in .wrangler/seed.json, per BASE) and creates only what
 * is missing; the key's secret is shown once by the API, so it is remembered there too (a fresh key replaces it
 * when it no longer works).
 *
 * Run by Node 22 directly (type stripping): only erasable TypeScript here.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SCOPES } from "../../src/contracts/scopes.ts";

const root = path.join(import.meta.dirname, "../..");
/** Where the key and ids are remembered (the doc runner points it at its scratch directory). */
const CACHE = process.env.SEED_CACHE ?? path.join(root, ".wrangler", "seed.json");
const BASE = (process.env.BASE ?? "http://localhost:8787").replace(/\/+$/, "").replace(/\/api\/v1$/, "");
const API = `${BASE}/api/v1`;
const PASSWORD = "correct-horse-battery";
const KEY_NAME = "seed: every scope";

export const DOCUMENTS = [
  {
    filename: "handbook.md",
    text:
      "# Refunds\n\nCustomers can request a refund within 30 days of purchase. Refunds are paid to the original payment method within 5 business days.\n\n" +
      "# Support\n\nThe support desk is open Monday to Friday from 9:00 to 17:00.\n",
  },
  {
    filename: "shipping.md",
    text:
      "# Shipping\n\nOrders ship from the Rotterdam warehouse within 2 business days. Standard delivery in the EU takes 3 to 5 days; express delivery takes 1 day.\n\n" +
      "# Returns\n\nReturned items must be unused and in their original packaging. Return shipping is free for defective items.\n",
  },
];

interface Seeded {
  email: string;
  slug: string;
  org_id: string;
  env_id: string;
  tenant_id: string;
  kb_id: string;
  key?: string;
  key_id?: string;
  doc_ids?: Record<string, string>;
}

const log = (msg: string) => process.stderr.write(`seed: ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(p: string, init: { cookie?: string; key?: string; method?: string; body?: unknown } = {}) {
  const method = init.method ?? (init.body !== undefined ? "POST" : "GET");
  const res = await fetch(`${API}${p}`, {
    method,
    headers: {
      ...(init.body !== undefined ? { "Content-Type": "application/json" } : {}),
      ...(init.cookie ? { Cookie: init.cookie } : {}),
      ...(init.key ? { Authorization: `Bearer ${init.key}` } : {}),
    },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

async function must(p: string, init: Parameters<typeof call>[1] = {}) {
  const r = await call(p, init);
  if (r.status >= 300) throw new Error(`${init.method ?? (init.body !== undefined ? "POST" : "GET")} ${p} -> ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

function readCache(): Record<string, Seeded> {
  try {
    return JSON.parse(readFileSync(CACHE, "utf8"));
  } catch {
    return {};
  }
}

function writeCache(s: Seeded): void {
  mkdirSync(path.dirname(CACHE), { recursive: true });
  writeFileSync(CACHE, JSON.stringify({ ...readCache(), [BASE]: s }, null, 2), { mode: 0o600 });
}

/** Signs in (signing up first when the user does not exist); returns the session cookie. */
async function signIn(email: string): Promise<string> {
  let r = await call("/auth/login", { body: { email, password: PASSWORD } });
  if (r.status === 401) {
    r = await call("/auth/signup", { body: { email, password: PASSWORD, name: "Ada" } });
    if (r.status < 300) log(`signed up ${email}`);
  }
  if (r.status >= 300) throw new Error(`signing in as ${email} -> ${r.status}: ${JSON.stringify(r.body)}`);
  const cookie = /kb_session=[^;]+/.exec(r.headers.get("set-cookie") ?? "")?.[0];
  if (!cookie) throw new Error("no session cookie in the sign-in answer");
  return cookie;
}

/** The organization (slug), its default environment and default tenant: found, or created. */
async function organization(cookie: string, slug: string): Promise<Pick<Seeded, "org_id" | "env_id" | "tenant_id">> {
  const { organizations } = await must("/organizations", { cookie });
  const found = (organizations as { id: string; slug: string }[]).find((o) => o.slug === slug);
  if (!found) {
    const org = await must("/organizations", { cookie, body: { name: "Acme", slug } });
    log(`created organization ${slug}`);
    return { org_id: org.id, env_id: org.default_environment_id, tenant_id: org.default_tenant_id };
  }
  const { environments } = await must(`/organizations/${found.id}/environments`, { cookie });
  const env = (environments as { id: string; is_default: boolean }[]).find((e) => e.is_default) ?? environments[0];
  const { tenants } = await must(`/tenants?env_id=${env.id}`, { cookie });
  const tenant = (tenants as { id: string; name: string }[]).find((t) => t.name === "default") ?? tenants[0];
  return { org_id: found.id, env_id: env.id, tenant_id: tenant.id };
}

/** A working key with every scope: the remembered one, or a new one (older seed keys revoked). */
async function apiKey(cookie: string, s: Seeded): Promise<{ key: string; key_id: string }> {
  if (s.key && s.key_id && (await call("/me", { key: s.key })).status === 200) return { key: s.key, key_id: s.key_id };
  const { api_keys } = await must(`/environments/${s.env_id}/api-keys`, { cookie });
  for (const old of (api_keys as { id: string; name: string }[]).filter((k) => k.name === KEY_NAME)) {
    await must(`/api-keys/${old.id}`, { cookie, method: "DELETE" });
  }
  const created = await must(`/environments/${s.env_id}/api-keys`, { cookie, body: { name: KEY_NAME, scopes: [...SCOPES] } });
  log("created an API key with every scope");
  return { key: created.key, key_id: created.id };
}

async function knowledgeBase(key: string, s: Seeded): Promise<string> {
  if (s.kb_id && (await call(`/knowledge-bases/${s.kb_id}`, { key })).status === 200) return s.kb_id;
  const { knowledge_bases } = await must(`/knowledge-bases?tenant_id=${s.tenant_id}`, { key });
  const found = (knowledge_bases as { id: string; name: string }[]).find((k) => k.name === "Handbook");
  if (found) return found.id;
  const kb = await must("/knowledge-bases", { key, body: { tenant_id: s.tenant_id, name: "Handbook" } });
  log("created knowledge base Handbook");
  return kb.id;
}

/** Uploads each document the knowledge base does not hold yet, then waits until all are processed. */
async function documents(key: string, s: Seeded): Promise<Record<string, string>> {
  const { documents: listed } = await must(`/documents?kb_id=${s.kb_id}&limit=200`, { key });
  const have = new Map((listed as { id: string; filename: string; status: string }[]).filter((d) => d.status !== "failed").map((d) => [d.filename, d.id]));
  const ids: Record<string, string> = {};
  for (const doc of DOCUMENTS) {
    const existing = have.get(doc.filename);
    if (existing) {
      ids[doc.filename] = existing;
      continue;
    }
    const bytes = new TextEncoder().encode(doc.text);
    const p = await must("/documents/presign", {
      key,
      body: { kb_id: s.kb_id, tenant_id: s.tenant_id, filename: doc.filename, mime_type: "text/markdown", size_bytes: bytes.byteLength },
    });
    const put = await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: bytes });
    if (!put.ok) throw new Error(`uploading ${doc.filename} -> ${put.status}: ${await put.text()} (is PUBLIC_BASE_URL the address the service runs at?)`);
    log(`uploaded ${doc.filename}`);
    ids[doc.filename] = p.document_id;
  }
  for (const [filename, id] of Object.entries(ids)) {
    for (let i = 0; ; i++) {
      const st = await must(`/documents/status?document_id=${id}`, { key });
      if (st.status === "processed") break;
      if (st.status === "failed") throw new Error(`${filename} failed to process: ${st.error}`);
      if (i > 600) throw new Error(`${filename} not processed after 60 s (status ${st.status})`);
      await sleep(100);
    }
  }
  return ids;
}

const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

export function exportLines(s: Seeded & { cookie: string; key: string }): string {
  return [
    `export BASE=${quote(BASE)}`,
    `export API=${quote(API)}`,
    `export COOKIE=${quote(s.cookie)}`,
    `export ORG_ID=${s.org_id} ENV_ID=${s.env_id} TENANT_ID=${s.tenant_id}`,
    `export KEY=${quote(s.key)}`,
    `export AUTH=${quote(`Authorization: Bearer ${s.key}`)}`,
    `export KB_ID=${s.kb_id} DOC_ID=${s.doc_ids?.["handbook.md"] ?? ""}`,
    `json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(eval("JSON.parse(s)"+process.argv[1])))' "$1"; }`,
  ].join("\n");
}

async function reachable(): Promise<boolean> {
  try {
    return (await fetch(`${BASE}/health`)).ok;
  } catch {
    return false;
  }
}

async function main(reset: boolean): Promise<void> {
  if (!(await reachable())) {
    if (reset && /^http:\/\/(localhost|127\.0\.0\.1):8787$/.test(BASE)) {
      rmSync(path.join(root, ".wrangler", "state"), { recursive: true, force: true });
      rmSync(CACHE, { force: true });
      log("the service is not running: wiped the local state (.wrangler/state); start it (npm start) and run npm run seed");
      return;
    }
    throw new Error(`no service at ${BASE} (start it with npm start or npm run dev:stack, or set BASE)`);
  }
  const cached = reset ? undefined : readCache()[BASE];
  const suffix = reset ? `-${Date.now().toString(36)}` : "";
  const email = cached?.email ?? `ada${suffix}@example.com`;
  const slug = cached?.slug ?? `acme${suffix}`;
  const cookie = await signIn(email);
  const org = await organization(cookie, slug);
  const s: Seeded = { ...cached, email, slug, ...org, kb_id: cached?.org_id === org.org_id ? cached.kb_id : "" };
  Object.assign(s, await apiKey(cookie, s));
  writeCache(s);
  s.kb_id = await knowledgeBase(s.key!, s);
  s.doc_ids = await documents(s.key!, s);
  writeCache(s);
  log(`ready: knowledge base ${s.kb_id} with ${DOCUMENTS.map((d) => d.filename).join(" and ")} processed`);
  console.log(exportLines({ ...s, cookie, key: s.key! }));
}

if (import.meta.main) {
  main(process.argv.includes("--reset")).catch((e) => {
    console.error(`seed: ${(e as Error).message}`);
    process.exitCode = 1;
  });
}

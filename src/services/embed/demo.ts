import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { documents, type KnowledgeBase, knowledgeBases, organizationMembers, organizations, tenants, type User, users } from "../../db/schema";
import type { Database } from "../../db/client";
import type { Env } from "../../env";
import { randomToken } from "../../lib/crypto";
import { createSession } from "../identity/sessions";
import { config } from "../../lib/config";

/**
 * The demo behind GET /embed/demo (development and test only): a local user `embed-demo@example.com`
 * with an organization and a knowledge base holding a small handbook, provisioned on first use through
 * the service's own API (so it is made exactly as a customer would make it), and reused afterwards.
 * The demo's "backend" mints tokens as that user.
 */
export const DEMO_EMAIL = "embed-demo@example.com";
const DEMO_KB_NAME = "Embed demo: company handbook";
const DEMO_DOC = `# Acme company handbook

## Refunds
Customers can request a refund within 30 days of purchase. Refunds are paid to the original payment method within 5 business days. Gift cards cannot be refunded.

## Shipping
Orders ship within 2 business days from our warehouse in Leeds. Express shipping costs 15 euros and arrives the next day.

## Support hours
The support desk is open Monday to Friday from 9:00 to 17:00 CET. Urgent incidents can be reported by phone at any time.

## Warranty
Every device has a two-year warranty covering manufacturing defects. Accidental damage is not covered.
`;

/** Demo routes exist only where ENVIRONMENT is development or test; elsewhere they answer 404. */
export function demoEnabled(env: Env): boolean {
  const e = config(env).environment;
  return e === "development" || e === "test";
}

type Fetcher = (method: string, path: string, opts?: { cookie?: string; body?: unknown; raw?: BodyInit; headers?: Record<string, string> }) => Promise<Response>;

let pending: Promise<{ userId: string; kb: KnowledgeBase }> | null = null;

/** The demo user and knowledge base, provisioned once (concurrent first calls share the work). */
export function ensureDemo(ctx: ServiceContext, internal: Fetcher) {
  pending ??= provision(ctx, internal).catch((e) => {
    pending = null;
    throw e;
  });
  return pending;
}

async function answerJson(res: Response, what: string) {
  const text = await res.text();
  if (!res.ok) throw new Error(`embed demo: ${what} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** The demo user: signed up through the API the first time (with the session cookie that gave), else found. */
async function demoUser(db: Database, internal: Fetcher): Promise<{ user: User; cookie: string }> {
  const user = await db.select().from(users).where(eq(users.email, DEMO_EMAIL)).get();
  if (user) return { user, cookie: "" };
  const res = await internal("POST", "/api/v1/auth/signup", { body: { email: DEMO_EMAIL, password: randomToken(24), name: "Embed demo" } });
  await answerJson(res, "signup");
  const cookie = /kb_session=[^;]+/.exec(res.headers.get("Set-Cookie") ?? "")![0];
  return { user: (await db.select().from(users).where(eq(users.email, DEMO_EMAIL)).get())!, cookie };
}

/** The demo knowledge base if it was made, and whether it holds the handbook yet. */
async function existingDemo(db: Database, userId: string) {
  const found = await db
    .select({ kb: knowledgeBases })
    .from(knowledgeBases)
    .innerJoin(organizationMembers, eq(organizationMembers.organizationId, knowledgeBases.organizationId))
    .where(and(eq(organizationMembers.userId, userId), eq(knowledgeBases.name, DEMO_KB_NAME)))
    .get();
  if (!found) return null;
  const doc = await db.select({ id: documents.id }).from(documents).where(eq(documents.knowledgeBaseId, found.kb.id)).get();
  return { kb: found.kb, hasHandbook: Boolean(doc) };
}

/** The user's organization (made through the API if it has none) and its default tenant. */
async function demoTenant(db: Database, internal: Fetcher, userId: string, cookie: string): Promise<string> {
  const org = await db
    .select({ id: organizations.id })
    .from(organizations)
    .innerJoin(organizationMembers, eq(organizationMembers.organizationId, organizations.id))
    .where(eq(organizationMembers.userId, userId))
    .get();
  if (!org) {
    const slug = `embed-demo-${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, "x")}`;
    const created = await answerJson(await internal("POST", "/api/v1/organizations", { cookie, body: { name: "Embed demo", slug } }), "create organization");
    return created.default_tenant_id;
  }
  const t = await db.select({ id: tenants.id }).from(tenants).where(and(eq(tenants.organizationId, org.id), eq(tenants.isDefault, true))).get();
  if (!t) throw new Error("embed demo: the demo organization has no default tenant");
  return t.id;
}

async function makeKnowledgeBase(internal: Fetcher, cookie: string, tenantId: string): Promise<{ id: string; tenantId: string }> {
  const body = { tenant_id: tenantId, name: DEMO_KB_NAME };
  const made = await answerJson(await internal("POST", "/api/v1/knowledge-bases", { cookie, body }), "create knowledge base");
  return { id: made.id, tenantId };
}

/** Uploads the handbook through a presigned URL, as a customer's backend would. */
async function uploadHandbook(internal: Fetcher, cookie: string, kbId: string, tenantId: string) {
  const bytes = new TextEncoder().encode(DEMO_DOC);
  const presign = await answerJson(
    await internal("POST", "/api/v1/documents/presign", {
      cookie,
      body: { kb_id: kbId, tenant_id: tenantId, filename: "handbook.md", mime_type: "text/markdown", size_bytes: bytes.byteLength },
    }),
    "presign",
  );
  const target = new URL(presign.upload_url);
  const headers = { ...presign.headers, "Content-Length": String(bytes.byteLength) };
  await answerJson(await internal("PUT", target.pathname + target.search, { raw: bytes, headers }), "upload");
}

async function provision(ctx: ServiceContext, internal: Fetcher): Promise<{ userId: string; kb: KnowledgeBase }> {
  const db = ctx.db;
  const { user, cookie: signupCookie } = await demoUser(db, internal);
  const existing = await existingDemo(db, user.id);
  if (existing?.hasHandbook) return { userId: user.id, kb: existing.kb };
  // Something is still to be made: act as the demo user through the API.
  const cookie = signupCookie || `kb_session=${(await createSession(db, user.id, { userAgent: "embed-demo" })).token}`;
  const kb = existing?.kb ?? (await makeKnowledgeBase(internal, cookie, await demoTenant(db, internal, user.id, cookie)));
  await uploadHandbook(internal, cookie, kb.id, kb.tenantId);
  return { userId: user.id, kb: (await db.select().from(knowledgeBases).where(eq(knowledgeBases.id, kb.id)).get())! };
}

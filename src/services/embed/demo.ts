import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import { documents, knowledgeBases, organizationMembers, organizations, tenants, users, type KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import { randomToken } from "../../lib/crypto";
import type { AppEnv } from "../../types";
import { createSession } from "../identity/sessions";

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
  const e = env.ENVIRONMENT ?? "development";
  return e === "development" || e === "test";
}

type Fetcher = (method: string, path: string, opts?: { cookie?: string; body?: unknown; raw?: BodyInit; headers?: Record<string, string> }) => Promise<Response>;

let pending: Promise<{ userId: string; kb: KnowledgeBase }> | null = null;

/** The demo user and knowledge base, provisioned once (concurrent first calls share the work). */
export function ensureDemo(c: Context<AppEnv>, internal: Fetcher) {
  pending ??= provision(c, internal).catch((e) => {
    pending = null;
    throw e;
  });
  return pending;
}

async function provision(c: Context<AppEnv>, internal: Fetcher): Promise<{ userId: string; kb: KnowledgeBase }> {
  const db = c.get("db");
  const json = async (res: Response, what: string) => {
    const text = await res.text();
    if (!res.ok) throw new Error(`embed demo: ${what} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };

  // The user: signed up through the API the first time, else a fresh session for it.
  let user = await db.select().from(users).where(eq(users.email, DEMO_EMAIL)).get();
  let cookie = "";
  if (!user) {
    const res = await internal("POST", "/api/v1/auth/signup", { body: { email: DEMO_EMAIL, password: randomToken(24), name: "Embed demo" } });
    await json(res, "signup");
    cookie = /kb_session=[^;]+/.exec(res.headers.get("Set-Cookie") ?? "")![0];
    user = (await db.select().from(users).where(eq(users.email, DEMO_EMAIL)).get())!;
  }

  const existing = await db
    .select({ kb: knowledgeBases })
    .from(knowledgeBases)
    .innerJoin(organizationMembers, eq(organizationMembers.organizationId, knowledgeBases.organizationId))
    .where(and(eq(organizationMembers.userId, user.id), eq(knowledgeBases.name, DEMO_KB_NAME)))
    .get();
  let kbId = existing?.kb.id;
  let tenantId = existing?.kb.tenantId;
  if (existing) {
    const doc = await db.select({ id: documents.id }).from(documents).where(eq(documents.knowledgeBaseId, existing.kb.id)).get();
    if (doc) return { userId: user.id, kb: existing.kb };
  }
  // Something is still to be made: act as the demo user through the API.
  if (!cookie) cookie = `kb_session=${(await createSession(db, user.id, { userAgent: "embed-demo" })).token}`;
  if (!existing) {
    let org = await db
      .select({ id: organizations.id })
      .from(organizations)
      .innerJoin(organizationMembers, eq(organizationMembers.organizationId, organizations.id))
      .where(eq(organizationMembers.userId, user.id))
      .get();
    if (!org) {
      const created = await json(
        await internal("POST", "/api/v1/organizations", { cookie, body: { name: "Embed demo", slug: `embed-demo-${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, "x")}` } }),
        "create organization",
      );
      org = { id: created.id };
      tenantId = created.default_tenant_id;
    } else {
      const t = await db.select({ id: tenants.id }).from(tenants).where(and(eq(tenants.organizationId, org.id), eq(tenants.isDefault, true))).get();
      if (!t) throw new Error("embed demo: the demo organization has no default tenant");
      tenantId = t.id;
    }
    kbId = (await json(await internal("POST", "/api/v1/knowledge-bases", { cookie, body: { tenant_id: tenantId, name: DEMO_KB_NAME } }), "create knowledge base")).id;
  }
  const bytes = new TextEncoder().encode(DEMO_DOC);
  const presign = await json(
    await internal("POST", "/api/v1/documents/presign", {
      cookie,
      body: { kb_id: kbId, tenant_id: tenantId, filename: "handbook.md", mime_type: "text/markdown", size_bytes: bytes.byteLength },
    }),
    "presign",
  );
  const target = new URL(presign.upload_url);
  const headers = { ...presign.headers, "Content-Length": String(bytes.byteLength) };
  await json(await internal("PUT", target.pathname + target.search, { raw: bytes, headers }), "upload");
  const row = (await db.select().from(knowledgeBases).where(eq(knowledgeBases.id, kbId!)).get())!;
  return { userId: user.id, kb: row };
}

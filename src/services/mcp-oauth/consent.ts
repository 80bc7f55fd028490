import { asc, eq } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { authorize } from "../../auth/authorize";
import type { Database } from "../../db/client";
import { environments, knowledgeBases, organizationMembers, organizations, tenants, type KnowledgeBase } from "../../db/schema";
import { ApiError, badRequest } from "../../lib/errors";
import { getKnowledgeBase, knowledgeBaseScope } from "../knowledge-bases";

/**
 * What the consent page offers a signed-in member, and the check of what they picked: knowledge
 * bases of one tenant, each one they may ask questions of (the authorization layer decides).
 */

/** The most knowledge bases listed on the page, and picked for one grant. */
export const MAX_LISTED = 500;
export const MAX_PICKED = 100;

export interface ConsentTenant {
  organizationName: string;
  environmentName: string;
  tenantId: string;
  tenantName: string;
  knowledgeBases: { id: string; name: string; status: KnowledgeBase["status"] }[];
}

/** The knowledge bases of every organization the user belongs to, grouped by tenant. */
export async function consentChoices(db: Database, userId: string): Promise<{ tenants: ConsentTenant[]; truncated: boolean }> {
  const rows = await db
    .select({
      organizationName: organizations.name,
      environmentName: environments.name,
      tenantId: tenants.id,
      tenantName: tenants.name,
      id: knowledgeBases.id,
      name: knowledgeBases.name,
      status: knowledgeBases.status,
    })
    .from(organizationMembers)
    .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
    .innerJoin(knowledgeBases, eq(knowledgeBases.organizationId, organizationMembers.organizationId))
    .innerJoin(tenants, eq(tenants.id, knowledgeBases.tenantId))
    .innerJoin(environments, eq(environments.id, knowledgeBases.environmentId))
    .where(eq(organizationMembers.userId, userId))
    .orderBy(asc(organizations.name), asc(environments.name), asc(tenants.name), asc(knowledgeBases.name), asc(knowledgeBases.id))
    .limit(MAX_LISTED + 1)
    .all();
  const byTenant = new Map<string, ConsentTenant>();
  for (const r of rows.slice(0, MAX_LISTED)) {
    let t = byTenant.get(r.tenantId);
    if (!t) byTenant.set(r.tenantId, (t = { organizationName: r.organizationName, environmentName: r.environmentName, tenantId: r.tenantId, tenantName: r.tenantName, knowledgeBases: [] }));
    t.knowledgeBases.push({ id: r.id, name: r.name, status: r.status });
  }
  return { tenants: [...byTenant.values()], truncated: rows.length > MAX_LISTED };
}

export interface PickedScope {
  organizationId: string;
  environmentId: string;
  tenantId: string;
  knowledgeBaseIds: string[];
}

/**
 * The picked knowledge bases, authorized for the signed-in member (the caller of `c`) as asking
 * questions: 400 for none, too many or several tenants; 404 for one they may not reach.
 */
export async function checkPicked(ctx: ServiceContext, picked: string[]): Promise<PickedScope> {
  const ids = [...new Set(picked.filter((id) => id.length > 0 && id.length <= 128))];
  if (!ids.length) throw badRequest("Pick at least one knowledge base");
  if (ids.length > MAX_PICKED) throw badRequest(`Pick at most ${MAX_PICKED} knowledge bases`);
  const kbs: KnowledgeBase[] = [];
  for (const id of ids) {
    const kb = await getKnowledgeBase(ctx.db, id);
    await authorize(ctx, "query:rag", knowledgeBaseScope(kb), { what: "Knowledge base" });
    kbs.push(kb!);
  }
  const first = kbs[0];
  if (kbs.some((kb) => kb.tenantId !== first.tenantId)) {
    throw new ApiError("invalid_request", "Pick knowledge bases of one tenant: a grant reaches one tenant");
  }
  return { organizationId: first.organizationId, environmentId: first.environmentId, tenantId: first.tenantId, knowledgeBaseIds: kbs.map((kb) => kb.id) };
}

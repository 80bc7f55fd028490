import { and, asc, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../contracts/context";
import type { AuthorizeOptions } from "../auth/authorize";
import { assertTenantMatches, loadAuthorized } from "../auth/load";
import type { Permission } from "../auth/permissions";
import { inKnowledgeBase, inTenant, registerResource, type ResourceScope } from "../auth/resources";
import type { Database } from "../db/client";
import { knowledgeBases, type KnowledgeBase, type Tenant } from "../db/schema";
import { ApiError, forbidden, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { tenantFor } from "./tenants";
import { pageOf } from "../db/page";

/** The prompt fields, API name -> column, in the order the specification lists them. */
export const PROMPT_FIELDS = {
  persona: "persona",
  instructions: "instructions",
  customPrompt: "customPrompt",
  mainCustomPrompt: "mainCustomPrompt",
  sqlCustomPrompt: "sqlCustomPrompt",
  sqlAgentInstructions: "sqlAgentInstructions",
  sqlAnsweringInstructions: "sqlAnsweringInstructions",
  chartInstructions: "chartInstructions",
} as const satisfies Record<string, keyof KnowledgeBase>;

export type PromptFieldName = keyof typeof PROMPT_FIELDS;

export function promptOf(kb: KnowledgeBase) {
  const out = {} as Record<PromptFieldName, string | null>;
  for (const [api, col] of Object.entries(PROMPT_FIELDS)) out[api as PromptFieldName] = kb[col] as string | null;
  return out;
}

export function publicKnowledgeBase(kb: KnowledgeBase) {
  return {
    id: kb.id,
    tenant_id: kb.tenantId,
    name: kb.name,
    description: kb.description,
    status: kb.status,
    kbMemoryMode: kb.kbMemoryMode,
    agent_sharing: { inbound_delegation_enabled: kb.inboundDelegationEnabled },
    ...promptOf(kb),
    embedding_model: kb.embeddingModel,
    embedding_dimensions: kb.embeddingDimensions,
    created_at: kb.createdAt,
    updated_at: kb.updatedAt,
  };
}

export const knowledgeBaseScope = (
  kb: Pick<KnowledgeBase, "id" | "organizationId" | "environmentId" | "tenantId"> | undefined | null,
): ResourceScope | null =>
  kb ? inKnowledgeBase(kb) : null;

export async function getKnowledgeBase(db: Database, id: string): Promise<KnowledgeBase | undefined> {
  return db.select().from(knowledgeBases).where(eq(knowledgeBases.id, id)).get();
}

export interface KnowledgeBaseForOptions extends AuthorizeOptions {
  /** A `tenant_id` sent with the request: it must be the knowledge base's tenant (400 tenant_mismatch). */
  tenantId?: string;
  /** Where that `tenant_id` was sent, for the error detail (default `body.tenant_id`). */
  tenantPath?: string;
}

/** A knowledge base by id, authorized for `permission` (404 when missing or out of reach). */
export async function knowledgeBaseFor(
  ctx: ServiceContext,
  id: string,
  permission: Permission,
  opts: KnowledgeBaseForOptions = {},
): Promise<KnowledgeBase> {
  const { tenantId, tenantPath, ...authorizeOpts } = opts;
  const kb = await getKnowledgeBase(ctx.db, id);
  const { row } = await loadAuthorized(ctx, permission, kb, (k) => knowledgeBaseScope(k)!, { what: "Knowledge base", ...authorizeOpts });
  if (tenantId !== undefined) assertTenantMatches(row, tenantId, tenantPath);
  return row;
}

registerResource("knowledge_base", async (db, id) => knowledgeBaseScope(await getKnowledgeBase(db, id)));

export async function listKnowledgeBases(
  db: Database,
  tenantId: string,
  opts: { onlyId?: string | null; limit: number; offset: number },
) {
  const where = opts.onlyId
    ? and(eq(knowledgeBases.tenantId, tenantId), eq(knowledgeBases.id, opts.onlyId))
    : eq(knowledgeBases.tenantId, tenantId);
  return pageOf(db, knowledgeBases, where, [asc(knowledgeBases.createdAt), asc(knowledgeBases.id)], opts);
}

/** GET /knowledge-bases: a tenant's knowledge bases; a key restricted to one knowledge base sees only that one. */
export async function listKnowledgeBasesFor(ctx: ServiceContext, tenantId: string, page: { limit: number; offset: number }) {
  const tenant = await tenantFor(ctx, tenantId, "documents:read", { addressedBy: "param" });
  const caller = ctx.caller;
  const onlyId = caller.type === "api_key" ? caller.key.knowledgeBaseId : null;
  return listKnowledgeBases(ctx.db, tenant.id, { onlyId, ...page });
}

/** POST /knowledge-bases: in a tenant the caller may write to; a key restricted to one knowledge base cannot create others. */
export async function createKnowledgeBaseFor(ctx: ServiceContext, input: KnowledgeBaseInput & { name: string; tenant_id: string }) {
  const tenant = await tenantFor(ctx, input.tenant_id, "documents:write", { addressedBy: "param" });
  const caller = ctx.caller;
  if (caller.type === "api_key" && caller.key.knowledgeBaseId) {
    throw forbidden("This API key is restricted to one knowledge base and cannot create others");
  }
  return createKnowledgeBase(ctx.db, tenant, input, caller.type === "user" ? caller.user.id : caller.key.id);
}

export type KnowledgeBaseInput = Partial<Record<PromptFieldName, string | null>> & {
  name?: string;
  description?: string | null;
  status?: KnowledgeBase["status"];
  kbMemoryMode?: KnowledgeBase["kbMemoryMode"];
  agent_sharing?: { inbound_delegation_enabled?: boolean };
};

function columnsOf(input: KnowledgeBaseInput): Partial<KnowledgeBase> {
  const set: Partial<KnowledgeBase> = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.description !== undefined) set.description = input.description;
  if (input.status !== undefined) set.status = input.status;
  if (input.kbMemoryMode !== undefined) set.kbMemoryMode = input.kbMemoryMode;
  if (input.agent_sharing?.inbound_delegation_enabled !== undefined) {
    set.inboundDelegationEnabled = input.agent_sharing.inbound_delegation_enabled;
  }
  for (const [api, col] of Object.entries(PROMPT_FIELDS)) {
    const v = input[api as PromptFieldName];
    if (v !== undefined) (set as Record<string, unknown>)[col] = v;
  }
  return set;
}

/** Creates a knowledge base; the tenant's quota is checked in the same statement. */
export async function createKnowledgeBase(
  db: Database,
  tenant: Tenant,
  input: KnowledgeBaseInput & { name: string },
  createdBy: string | null,
): Promise<KnowledgeBase> {
  const now = nowIso();
  const kb: KnowledgeBase = {
    id: newId("kb"),
    ...inTenant(tenant),
    name: input.name,
    description: null,
    status: "active",
    kbMemoryMode: "disabled",
    inboundDelegationEnabled: false,
    persona: null,
    instructions: null,
    customPrompt: null,
    mainCustomPrompt: null,
    sqlCustomPrompt: null,
    sqlAgentInstructions: null,
    sqlAnsweringInstructions: null,
    chartInstructions: null,
    embeddingModel: null,
    embeddingDimensions: null,
    indexVersion: 0,
    createdBy,
    createdAt: now,
    updatedAt: now,
    ...columnsOf(input),
  };
  const res = await db.run(sql`
    INSERT INTO knowledge_bases (id, organization_id, environment_id, tenant_id, name, description, status,
      kb_memory_mode, inbound_delegation_enabled, persona, instructions, custom_prompt, main_custom_prompt,
      sql_custom_prompt, sql_agent_instructions, sql_answering_instructions, chart_instructions,
      embedding_model, embedding_dimensions, created_by, created_at, updated_at)
    SELECT ${kb.id}, ${kb.organizationId}, ${kb.environmentId}, ${kb.tenantId}, ${kb.name}, ${kb.description},
      ${kb.status}, ${kb.kbMemoryMode}, ${kb.inboundDelegationEnabled ? 1 : 0}, ${kb.persona}, ${kb.instructions},
      ${kb.customPrompt}, ${kb.mainCustomPrompt}, ${kb.sqlCustomPrompt}, ${kb.sqlAgentInstructions},
      ${kb.sqlAnsweringInstructions}, ${kb.chartInstructions}, NULL, NULL, ${createdBy}, ${now}, ${now}
    FROM tenants t WHERE t.id = ${tenant.id} AND t.knowledge_base_count < t.max_knowledge_bases`);
  if (!res.meta.changes) {
    throw new ApiError("quota_exceeded", `The tenant's knowledge base quota (${tenant.maxKnowledgeBases}) is reached`);
  }
  return kb;
}

export async function updateKnowledgeBase(db: Database, id: string, input: KnowledgeBaseInput): Promise<KnowledgeBase> {
  const set = { ...columnsOf(input), updatedAt: nowIso() };
  const row = await db.update(knowledgeBases).set(set).where(eq(knowledgeBases.id, id)).returning().get();
  if (!row) throw notFound("Knowledge base");
  return row;
}

export async function deleteKnowledgeBase(db: Database, id: string): Promise<void> {
  await db.delete(knowledgeBases).where(eq(knowledgeBases.id, id));
}

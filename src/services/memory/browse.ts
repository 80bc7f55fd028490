import type { Access } from "../../auth/authorize";
import type { ServiceContext } from "../../contracts/context";
import { loadAuthorized } from "../../auth/load";
import type { Permission } from "../../auth/permissions";
import { getKnowledgeBase, knowledgeBaseScope } from "../knowledge-bases";
import { memoryWithin, subjectFilter, tenantFor } from "./access";
import { EMPTY_GRAPH, listMemories, memoryGraph } from "./lists";
import { deleteMemory, publicMemory } from "./memories";
import { getMemorySettings } from "./settings";

/**
 * The memories API: a tenant's durable memories (knowledge base null) or one knowledge base's
 * `kb_restricted` ones, as the caller may see them (see access.ts: admins and keys every subject,
 * other members only their own).
 */
export interface MemoryView {
  tenantId: string;
  knowledgeBaseId: string | null;
  access: Access;
  /** Whether memories are kept here now: durable mode for a tenant, kb_restricted for a knowledge base. */
  kept: () => Promise<boolean>;
}

export async function tenantMemories(ctx: ServiceContext, tenantId: string, permission: Permission): Promise<MemoryView> {
  const { tenant, access } = await tenantFor(ctx, tenantId, permission);
  return { tenantId: tenant.id, knowledgeBaseId: null, access, kept: async () => (await getMemorySettings(ctx.db, tenant.id)).mode === "durable" };
}

export async function knowledgeBaseMemories(ctx: ServiceContext, kbId: string, permission: Permission): Promise<MemoryView> {
  const kb = await getKnowledgeBase(ctx.db, kbId);
  const { row, access } = await loadAuthorized(ctx, permission, kb, (k) => knowledgeBaseScope(k)!, { what: "Knowledge base" });
  return { tenantId: row.tenantId, knowledgeBaseId: row.id, access, kept: async () => row.kbMemoryMode === "kb_restricted" };
}

type ListQuery = { q?: string; subject_id?: string; external_subject_id?: string; limit: number; offset: number };

async function pageOfMemories(ctx: ServiceContext, view: MemoryView, q: ListQuery) {
  const filter = { tenantId: view.tenantId, knowledgeBaseId: view.knowledgeBaseId, subjectId: subjectFilter(view.access, q), q: q.q };
  const { rows, total } = await listMemories(ctx.db, filter, { limit: q.limit, offset: q.offset });
  return { memories: rows.map(publicMemory), total, limit: q.limit, offset: q.offset, disabled: false };
}

/** A tenant's memories; `disabled: true` (and none) while durable memory is off. */
export async function listTenantMemoriesOf(ctx: ServiceContext, view: MemoryView, q: ListQuery) {
  if (!(await view.kept())) return { memories: [], total: 0, disabled: true };
  return pageOfMemories(ctx, view, q);
}

/** A knowledge base's memories; `memories: null` unless it keeps them (kb_restricted). */
export async function listKnowledgeBaseMemories(ctx: ServiceContext, view: MemoryView, q: ListQuery) {
  if (!(await view.kept())) return { memories: null };
  return pageOfMemories(ctx, view, q);
}

/** The memories as entities and relationships; empty where none are kept. */
export async function graphOf(ctx: ServiceContext, view: MemoryView, q: { subject_id?: string; external_subject_id?: string }) {
  if (!(await view.kept())) return EMPTY_GRAPH;
  return memoryGraph(ctx.db, { tenantId: view.tenantId, knowledgeBaseId: view.knowledgeBaseId, subjectId: subjectFilter(view.access, q) });
}

/** Deletes one memory the caller may see (404 otherwise), with its graph edges. */
export async function deleteMemoryOf(ctx: ServiceContext, view: MemoryView, memoryId: string): Promise<void> {
  const m = await memoryWithin(ctx, view.access, { tenantId: view.tenantId, knowledgeBaseId: view.knowledgeBaseId }, memoryId);
  await deleteMemory(ctx.db, m.id);
}

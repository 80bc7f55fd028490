import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { tenantMemorySettings, type KnowledgeBase, type MemoryMode, type MemoryRetention, type Tenant } from "../../db/schema";
import { nowIso } from "../../lib/time";

/** Tenant memory settings; a tenant that never set them has the defaults (API-DECISIONS "Memory"). */
export const DEFAULT_MEMORY_SETTINGS = { mode: "disabled", retention: "explicit_only" } as const;

export interface MemorySettings {
  mode: MemoryMode;
  retention: MemoryRetention;
}

export async function getMemorySettings(db: Database, tenantId: string): Promise<MemorySettings> {
  const row = await db.select().from(tenantMemorySettings).where(eq(tenantMemorySettings.tenantId, tenantId)).get();
  return row ? { mode: row.mode, retention: row.retention } : { ...DEFAULT_MEMORY_SETTINGS };
}

export async function updateMemorySettings(
  db: Database,
  tenant: Pick<Tenant, "id" | "organizationId">,
  input: Partial<MemorySettings>,
): Promise<MemorySettings> {
  const next = { ...(await getMemorySettings(db, tenant.id)), ...input };
  await db
    .insert(tenantMemorySettings)
    .values({ tenantId: tenant.id, organizationId: tenant.organizationId, mode: next.mode, retention: next.retention, updatedAt: nowIso() })
    .onConflictDoUpdate({
      target: tenantMemorySettings.tenantId,
      set: { mode: next.mode, retention: next.retention, updatedAt: nowIso() },
    });
  return next;
}

export const publicMemorySettings = (tenantId: string, s: MemorySettings) => ({ tenant_id: tenantId, mode: s.mode, retention: s.retention });

/** One memory space: the memories of one subject in a tenant, durable (no knowledge base) or kept under one knowledge base. */
export interface MemorySpace {
  organizationId: string;
  tenantId: string;
  knowledgeBaseId: string | null;
  subjectId: string;
  scopeKey: string;
  retention: MemoryRetention;
}

/**
 * The hashed name of a memory space, one FTS5 token ("s" + 32 hex digits), so
 * that full-text queries select the space inside MATCH. Subject ids are
 * caller-chosen strings; hashing keeps them out of the query syntax.
 */
export async function scopeKeyOf(tenantId: string, knowledgeBaseId: string | null, subjectId: string): Promise<string> {
  const data = new TextEncoder().encode(`${tenantId}\n${knowledgeBaseId ?? ""}\n${subjectId}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return "s" + [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Which memory a turn on `kb` uses for `subjectId` (API-DECISIONS "Memory"):
 * kbMemoryMode `disabled` none; `subject` the tenant's durable memory of the
 * subject, only while the tenant's mode is `durable`; `kb_restricted` the
 * subject's memories under that knowledge base, whatever the tenant's mode.
 * Retention always comes from the tenant.
 */
export async function memorySpaceFor(
  db: Database,
  kb: Pick<KnowledgeBase, "id" | "organizationId" | "tenantId" | "kbMemoryMode">,
  subjectId: string,
  /** The tenant's settings when the caller read them already (a turn's one batch). */
  known?: MemorySettings,
): Promise<MemorySpace | null> {
  if (kb.kbMemoryMode === "disabled" || !subjectId) return null;
  const settings = known ?? (await getMemorySettings(db, kb.tenantId));
  if (kb.kbMemoryMode === "subject" && settings.mode !== "durable") return null;
  const knowledgeBaseId = spaceKnowledgeBaseId(kb);
  return {
    organizationId: kb.organizationId,
    tenantId: kb.tenantId,
    knowledgeBaseId,
    subjectId,
    scopeKey: await scopeKeyOf(kb.tenantId, knowledgeBaseId, subjectId),
    retention: settings.retention,
  };
}

/** The knowledge base a space of `kb`'s turns is kept under: itself when `kb_restricted`, none (durable) otherwise. */
export const spaceKnowledgeBaseId = (kb: Pick<KnowledgeBase, "id" | "kbMemoryMode">) => (kb.kbMemoryMode === "kb_restricted" ? kb.id : null);

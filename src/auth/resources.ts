import type { Database } from "../db/client";

import type { ResourceScope } from "../contracts/access";

export type { ResourceScope };

/** A row that lives in a knowledge base (document, artifact, chat, ...). */
export interface KnowledgeBaseRow {
  organizationId: string;
  environmentId: string;
  tenantId: string;
  knowledgeBaseId: string;
}

/** The scope of a row that lives in a knowledge base, or null for a missing row. */
export const knowledgeBaseRowScope = (row: KnowledgeBaseRow | undefined | null): ResourceScope | null =>
  row
    ? { organizationId: row.organizationId, environmentId: row.environmentId, tenantId: row.tenantId, knowledgeBaseId: row.knowledgeBaseId }
    : null;

/** The placement columns of a new row in a knowledge base. */
export const inKnowledgeBase = (kb: { id: string; organizationId: string; environmentId: string; tenantId: string }): KnowledgeBaseRow => ({
  organizationId: kb.organizationId,
  environmentId: kb.environmentId,
  tenantId: kb.tenantId,
  knowledgeBaseId: kb.id,
});

/** The placement columns of a new row in a tenant. */
export const inTenant = (t: { id: string; organizationId: string; environmentId: string }) => ({
  organizationId: t.organizationId,
  environmentId: t.environmentId,
  tenantId: t.id,
});

type ScopeResolver = (db: Database, id: string) => Promise<ResourceScope | null>;

const resolvers = new Map<string, ScopeResolver>();

/**
 * Registers how to find the scope of a resource type by id, for code that only
 * has an id in hand (for example an API key restricted to a knowledge base).
 */
export function registerResource(type: string, resolver: ScopeResolver): void {
  resolvers.set(type, resolver);
}

export async function resolveScope(db: Database, type: string, id: string): Promise<ResourceScope | null> {
  const resolver = resolvers.get(type);
  return resolver ? resolver(db, id) : null;
}

import type { Database } from "../db/client";

/**
 * Where a resource sits in the hierarchy. Authorization decides from this
 * alone, so any resource type joins the authorization layer by saying how to
 * find its scope.
 */
export interface ResourceScope {
  organizationId: string;
  /** Absent for organization-level resources (members, billing, environments list). */
  environmentId?: string;
  tenantId?: string;
  knowledgeBaseId?: string;
}

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

/** API-key scopes (specification, "Authentication"). */
export const SCOPES = [
  "documents:read",
  "documents:write",
  "documents:delete",
  "query:rag",
  "tenants:read",
  "tenants:write",
  "tenants:delete",
  "skills:read",
  "skills:write",
  "artifacts:read",
  "artifacts:write",
  "connectors:read",
  "connectors:write",
  "connectors:delete",
  "agents:read",
  "agents:write",
  "admin:full",
] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

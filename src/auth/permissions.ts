import type { Role } from "../db/schema";
import type { Scope } from "../contracts/scopes";

const ALL: readonly Role[] = ["owner", "billing_admin", "developer", "viewer"];
const WRITERS: readonly Role[] = ["owner", "billing_admin", "developer"];
const ADMINS: readonly Role[] = ["owner", "billing_admin"];
const OWNER: readonly Role[] = ["owner"];

export interface PermissionRule {
  /** Member roles that may do it with a user session. */
  roles: readonly Role[];
  /** The API-key scope that allows it; absent = user sessions only (keys get 403). */
  scope?: Scope;
  /** Changes state: refused while the organization is inactive or suspended. */
  write: boolean;
  /** Still allowed while the organization is inactive (so it can be reactivated or removed). */
  whileInactive?: boolean;
}

/**
 * Every action the API authorizes, in one table. Role rules follow the
 * specification's "Authentication" section; scopes for routes the scope table
 * does not name follow API-DECISIONS.md ("Smaller points, settled").
 * Later capabilities add their rows here.
 */
export const PERMISSIONS = {
  "organization:read": { roles: ALL, write: false },
  "organization:update": { roles: ADMINS, write: true, whileInactive: true },
  "organization:delete": { roles: OWNER, write: true, whileInactive: true },
  "members:read": { roles: ALL, write: false },
  "members:manage": { roles: OWNER, write: true },
  "environments:read": { roles: ALL, write: false },
  "environments:write": { roles: WRITERS, write: true },
  "environments:delete": { roles: OWNER, write: true },
  /** Where connect flows may end (allowed_redirect_origins): owner and developer (API-DECISIONS "Wave 3"). */
  "environments:redirects": { roles: ["owner", "developer"], write: true },
  "api_keys:read": { roles: WRITERS, write: false },
  "api_keys:manage": { roles: WRITERS, write: true },
  "billing:read": { roles: ALL, write: false },
  // Allowed while inactive: adding credits is how a suspended organization is brought back.
  "billing:write": { roles: ADMINS, write: true, whileInactive: true },

  "tenants:read": { roles: ALL, scope: "tenants:read", write: false },
  "tenants:write": { roles: ADMINS, scope: "tenants:write", write: true },
  "tenants:delete": { roles: ADMINS, scope: "tenants:delete", write: true },
  /** Tenant credits and usage reads: keys use tenants:read (specification). */
  "tenant_billing:read": { roles: ALL, scope: "tenants:read", write: false },

  "documents:read": { roles: ALL, scope: "documents:read", write: false },
  "documents:write": { roles: WRITERS, scope: "documents:write", write: true },
  "documents:delete": { roles: WRITERS, scope: "documents:delete", write: true },
  /** Asking questions is reading the knowledge base, so viewers may chat. */
  "query:rag": { roles: ALL, scope: "query:rag", write: true },
  "skills:read": { roles: ALL, scope: "skills:read", write: false },
  "skills:write": { roles: WRITERS, scope: "skills:write", write: true },
  "artifacts:read": { roles: ALL, scope: "artifacts:read", write: false },
  "artifacts:write": { roles: WRITERS, scope: "artifacts:write", write: true },
  /** Publishing is never available to keys. */
  "artifacts:publish": { roles: WRITERS, write: true },
  "connectors:read": { roles: ALL, scope: "connectors:read", write: false },
  "connectors:write": { roles: ALL, scope: "connectors:write", write: true },
  "connectors:delete": { roles: ALL, scope: "connectors:delete", write: true },

  // ---- Wave 2 ----
  /** MCP registrations: members read; the administrative roles write. Never keys (U only). */
  "mcp:read": { roles: ALL, write: false },
  "mcp:write": { roles: ADMINS, write: true },
  /** Tenant memory settings and durable memories: any member reads; owner/billing_admin change and delete. U only. */
  "memory:read": { roles: ALL, write: false },
  "memory:admin": { roles: ADMINS, write: true },
  "agents:read": { roles: ALL, scope: "agents:read", write: false },
  "agents:write": { roles: WRITERS, scope: "agents:write", write: true },
  /** Running an agent is asking questions: query:rag, any member. */
  "agents:run": { roles: ALL, scope: "query:rag", write: true },
  /**
   * Minting embed tokens (POST /embed/tokens): keys with query:rag; users who may configure the
   * organization's integrations (like API keys), so a viewer cannot hand out bearer credentials.
   */
  "embed:mint": { roles: WRITERS, scope: "query:rag", write: true },

  // ---- Wave 3 ----
  /**
   * OAuth clients of the knowledge-base MCP endpoint (GET/DELETE /mcp/oauth/grants). Any member lists
   * and revokes the grants they approved themselves; owners see and revoke all of the organization's
   * (src/services/mcp-oauth/grants.ts). Revoking is allowed while inactive: it only removes access.
   * Never keys (U only).
   */
  "mcp_oauth:read": { roles: ALL, write: false },
  "mcp_oauth:revoke": { roles: ALL, write: true, whileInactive: true },
} as const satisfies Record<string, PermissionRule>;

export type Permission = keyof typeof PERMISSIONS;

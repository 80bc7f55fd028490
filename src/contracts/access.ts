import type { Role } from "../db/schema";
import type { Caller, KeyCaller } from "./caller";
import type { Scope } from "./scopes";

/**
 * The access rules that every door shares (API-DECISIONS "Wave 3 → Access is one rule, whatever the
 * door"): REST routes, the A2A JSON-RPC methods, the MCP endpoint's tools, delegation, tool calls,
 * embed tokens and scheduled runs ask these functions, and none keeps a check of its own.
 * `authorize()` (src/auth/authorize.ts) answers "may this caller do this action on this resource" for a
 * request; the rules below are the parts of that answer that do not need the request, so a door
 * without one (a delegation inside a turn, a key being resolved) asks the same question.
 */

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

// ---- Reach: which containers a key (or an embed token, a key of one knowledge base) may touch -----

export type Reach = "ok" | "other_org" | "outside";

/** Whether a key reaches a scope; the reason when it does not. */
export function keyReach(key: KeyCaller, scope: ResourceScope): Reach {
  if (scope.organizationId !== key.key.organizationId) return "other_org";
  if (scope.environmentId && scope.environmentId !== key.key.environmentId) return "outside";
  if (scope.tenantId && !key.isAdmin && key.key.tenantIds.length > 0 && !key.key.tenantIds.includes(scope.tenantId)) return "outside";
  if (scope.knowledgeBaseId && key.key.knowledgeBaseId && scope.knowledgeBaseId !== key.key.knowledgeBaseId) return "outside";
  // An MCP OAuth grant (src/services/mcp-oauth) names its knowledge bases: the same restriction, for several.
  if (scope.knowledgeBaseId && key.oauth && !key.oauth.knowledgeBaseIds.includes(scope.knowledgeBaseId)) return "outside";
  return "ok";
}

// ---- Keys never hold more than the member who made them ---------------------------------------------

/** Scopes only the administrative roles may put on a key (a developer cannot change tenants or money). */
const ADMIN_ONLY_SCOPES: readonly Scope[] = ["tenants:write", "tenants:delete", "admin:full"];

/** The scopes of `scopes` that `role` may not grant (empty = every one may be granted). */
export function scopesBeyondRole(role: Role | null, scopes: readonly string[]): string[] {
  if (role === "owner" || role === "billing_admin") return [];
  if (role === "developer") return scopes.filter((s) => (ADMIN_ONLY_SCOPES as readonly string[]).includes(s));
  return [...scopes];
}

/** A key keeps working only while its creator is a member whose role could still mint it. */
export const keyStillBacked = (creatorRole: Role | null, scopes: readonly string[]): boolean =>
  creatorRole !== null && creatorRole !== "viewer" && scopesBeyondRole(creatorRole, scopes).length === 0;

// ---- Agent runs: whose runs a caller sees ---------------------------------------------------------

/**
 * A run's content (task, output, chat) belongs to the owner of its chat, like the chat itself: a
 * signed-in user sees the runs of their own chats; a key (the application) sees the runs of
 * key-owned chats (all its end users, as its chat list does); runs that never got a chat carry no
 * content and are visible to every reader. REST run routes and the A2A task methods both use this.
 */
export type RunViewer = { userId: string } | { apiKey: true };

export const runViewerOf = (caller: Caller): RunViewer => (caller.type === "user" ? { userId: caller.user.id } : { apiKey: true });

/** The `owner` value of the runs a viewer sees (besides the runs without owner). */
export const runOwnerSeenBy = (viewer: RunViewer): string => ("userId" in viewer ? `user:${viewer.userId}` : "app");

// ---- Delegation: a delegate stays inside the caller's reach ------------------------------------------

export interface DelegationPlace {
  organizationId: string;
  environmentId: string;
  tenantId: string;
  knowledgeBaseId: string;
}

/**
 * May a turn in `from` (a chat or an agent; its caller already reached it) delegate to an agent
 * living in `to`? Never across tenants, whoever asks; within the tenant, the same knowledge base, or
 * another one that opted in to inbound delegation. A caller limited to one tenant or knowledge base
 * (a key, an embed token) reached `from` itself, so this never takes it further than that.
 */
export function delegationAllowed(from: DelegationPlace, to: DelegationPlace, inboundEnabled: boolean): boolean {
  if (from.organizationId !== to.organizationId || from.environmentId !== to.environmentId) return false;
  if (from.tenantId !== to.tenantId) return false;
  return from.knowledgeBaseId === to.knowledgeBaseId || inboundEnabled;
}

// ---- Secrets of a registration: only those who may change it read them --------------------------------

export const REDACTED = "[redacted]";

/** A serialized header object with every value replaced by "[redacted]" (the names stay readable). */
export function redactHeaderValues(serialized: string | null): string | null {
  if (serialized === null) return null;
  try {
    const obj = JSON.parse(serialized) as Record<string, unknown>;
    return JSON.stringify(Object.fromEntries(Object.keys(obj).map((k) => [k, REDACTED])));
  } catch {
    return JSON.stringify({});
  }
}

import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../contracts/context";
import { organizationMembers, organizations, type Organization, type Role } from "../db/schema";
import { ApiError, forbidden, notFound, unauthorized } from "../lib/errors";
import type { Caller, KeyCaller, UserCaller } from "../contracts/caller";
import { PERMISSIONS, type Permission, type PermissionRule } from "./permissions";
import type { ResourceScope } from "./resources";
import type { Scope } from "../contracts/scopes";
import { keyReach } from "../contracts/access";
import { verifiedCaller } from "./caller-check";

/**
 * THE authorization layer. Every route decides "may this caller do this to
 * that" here and nowhere else.
 *
 * Order of checks, and why:
 *   1. No caller -> 401.
 *   2. API key on a user-only action, or a key without the scope -> 403. Neither
 *      depends on the resource, so answering first reveals nothing.
 *   3. Resource missing -> 404.
 *   4. Resource outside the caller's reach -> 404 when the resource was named
 *      in the path (never reveal that another tenant's resource exists); 403
 *      when the caller named a container in a parameter (`tenant_id`, `env_id`)
 *      of its own organization that its key may not use (API-DECISIONS: 403 for
 *      environment / allowlist / knowledge-base restriction violations).
 *      Reach: users reach organizations they are members of; keys reach their
 *      organization, their environment, the tenants of their allowlist (all
 *      tenants when it is empty, or with `admin:full`) and, when restricted,
 *      one knowledge base (an OAuth grant of the MCP endpoint: the knowledge
 *      bases its member picked).
 *   5. User role lacking -> 403.
 *   6. Writes in an inactive or suspended organization -> 403.
 */


export interface Access {
  caller: Caller;
  scope: ResourceScope;
  /** The user's role in the resource's organization; null for API keys. */
  role: Role | null;
  organizationStatus: Organization["status"];
}

export interface AuthorizeOptions {
  /** Name used in the 404 message. */
  what?: string;
  /** How the caller named the resource: in the path (default) or in a parameter. */
  addressedBy?: "path" | "param";
}

type Ctx = ServiceContext;

export function requireCaller(ctx: Ctx): Caller {
  const caller = ctx.caller;
  if (!caller) throw unauthorized();
  return caller;
}

/** The caller of a public route (src/auth/public-paths.ts), or null when anonymous. */
export function optionalCaller(ctx: Ctx): Caller | null {
  return (ctx.caller as Caller | null) ?? null;
}

/** For user-only (U) routes: API keys are refused with 403. */
export function requireUser(ctx: Ctx): UserCaller {
  const caller = requireCaller(ctx);
  if (caller.type !== "user") throw forbidden("This endpoint requires a signed-in user; API keys cannot use it");
  return caller;
}

export function keyHasScope(key: KeyCaller, scope: Scope): boolean {
  return key.isAdmin || key.scopes.has(scope);
}

/** Scope and user-only checks (step 2), usable before any lookup. */
export function assertPermissionClass(caller: Caller, permission: Permission): PermissionRule {
  const rule: PermissionRule = PERMISSIONS[permission];
  if (caller.type === "api_key") {
    if (!rule.scope) throw forbidden("This endpoint requires a signed-in user; API keys cannot use it");
    if (!keyHasScope(caller, rule.scope)) throw forbidden(`This API key lacks the scope ${rule.scope}`);
  }
  return rule;
}

// Memberships looked up during one request (a route may authorize several times).
const membershipCache = new WeakMap<Caller, Map<string, { role: Role; status: Organization["status"] } | null>>();

export async function membershipOf(
  ctx: Ctx,
  caller: UserCaller,
  organizationId: string,
): Promise<{ role: Role; status: Organization["status"] } | null> {
  let cache = membershipCache.get(caller);
  if (!cache) membershipCache.set(caller, (cache = new Map()));
  if (cache.has(organizationId)) return cache.get(organizationId)!;
  const row = await ctx
    .db
    .select({ role: organizationMembers.role, status: organizations.status })
    .from(organizationMembers)
    .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
    .where(and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, caller.user.id)))
    .get();
  cache.set(organizationId, row ?? null);
  return row ?? null;
}

/** A membership read elsewhere in the same request (a turn's one batch of reads): authorize then needs no query. */
export function primeMembership(caller: UserCaller, organizationId: string, row: { role: Role; status: Organization["status"] } | null) {
  let cache = membershipCache.get(caller);
  if (!cache) membershipCache.set(caller, (cache = new Map()));
  cache.set(organizationId, row);
}

/** Forget cached memberships (after a role change within the same request). */
export function forgetMemberships(caller: Caller) {
  membershipCache.delete(caller);
}

export { keyReach } from "../contracts/access";

export async function authorize(
  ctx: Ctx,
  permission: Permission,
  scope: ResourceScope | null | undefined,
  opts: AuthorizeOptions = {},
): Promise<Access> {
  await verifiedCaller(ctx); // a cached key's or session's re-read (src/auth/caller-cache.ts) decides first
  const caller = requireCaller(ctx);
  const rule = assertPermissionClass(caller, permission);
  const what = opts.what ?? "Resource";
  if (!scope) throw notFound(what);

  let role: Role | null = null;
  let status: Organization["status"];
  if (caller.type === "user") {
    const m = await membershipOf(ctx, caller, scope.organizationId);
    if (!m) throw notFound(what);
    if (!rule.roles.includes(m.role)) {
      throw forbidden(`Your role (${m.role}) does not allow this; it needs one of: ${rule.roles.join(", ")}`);
    }
    role = m.role;
    status = m.status;
  } else {
    const reach = keyReach(caller, scope);
    if (reach === "other_org") throw notFound(what);
    if (reach === "outside") {
      if (opts.addressedBy === "param") {
        throw forbidden(`This API key may not access this ${what.toLowerCase()} (environment, tenant or knowledge-base restriction)`);
      }
      throw notFound(what);
    }
    status = caller.organizationStatus;
  }

  if (rule.write && status !== "active" && !rule.whileInactive) {
    throw new ApiError("forbidden", `The organization is ${status}; changes are not allowed until it is active again`);
  }
  return { caller, scope, role, organizationStatus: status };
}

/**
 * For list endpoints over an environment: the tenant ids a caller may see,
 * or null when every tenant of the environment is visible.
 */
export function visibleTenantIds(caller: Caller): string[] | null {
  if (caller.type === "user") return null;
  if (caller.isAdmin || caller.key.tenantIds.length === 0) return null;
  return caller.key.tenantIds;
}

/**
 * The same question as `authorize`, answered yes or no (no refusal thrown): for what a response
 * shows to one reader and not another (a registration's secrets to those who may change it).
 */
export async function may(ctx: Ctx, permission: Permission, scope: ResourceScope): Promise<boolean> {
  try {
    await authorize(ctx, permission, scope);
    return true;
  } catch (e) {
    if (e instanceof ApiError) return false;
    throw e;
  }
}

import { ApiError } from "../lib/errors";
import type { ServiceContext } from "../contracts/context";
import { authorize, type Access, type AuthorizeOptions } from "./authorize";
import type { Permission } from "./permissions";
import type { ResourceScope } from "./resources";

/**
 * Load, authorize, narrow — once. Every route that acts on a resource by id
 * passes the loaded row (or undefined) and how to find its scope; it gets back
 * the row, non-null and authorized through the one authorization layer, or the
 * refusal (404 for a missing row or one outside the caller's reach, 403 for a
 * role or scope violation). Services provide `xFor`-style wrappers on top.
 */
export async function loadAuthorized<T>(
  ctx: ServiceContext,
  permission: Permission,
  row: T | null | undefined,
  scopeOf: (row: T) => ResourceScope,
  opts: AuthorizeOptions = {},
): Promise<{ row: T; access: Access }> {
  const access = await authorize(ctx, permission, row ? scopeOf(row) : null, opts);
  return { row: row as T, access };
}

/** `tenant_id` in a request must name the tenant of the knowledge base it goes with (400 tenant_mismatch). */
export function assertTenantMatches(kb: { tenantId: string }, tenantId: string, path = "body.tenant_id") {
  if (kb.tenantId !== tenantId) {
    throw new ApiError("tenant_mismatch", "tenant_id does not match the knowledge base's tenant", {
      details: [{ path, message: "Does not match the knowledge base's tenant" }],
    });
  }
}

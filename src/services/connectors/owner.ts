import { authorize } from "../../auth/authorize";
import type { ServiceContext } from "../../contracts/context";
import type { Permission } from "../../auth/permissions";
import { badRequest } from "../../lib/errors";
import { getTenant, tenantScope } from "../tenants";
import { extOwner, userOwner, type Owner } from "./connections";

/**
 * The owner of the connections a request addresses, through the authorization layer:
 * - a signed-in user owns their own connections and sends neither field (400 if they do, once the tenant
 *   named, if any, is known to be theirs to name: an outsider learns nothing from the 400);
 * - an API key acts for one end user of one tenant it may reach: `tenant_id` and `external_subject_id` are
 *   both required (a tenant outside its reach: 404 in another organization, 403 outside its allowlist).
 */
export async function connectorOwnerFor(
  ctx: ServiceContext,
  permission: Permission,
  input: { tenant_id?: string; external_subject_id?: string },
  where: "body" | "query",
): Promise<Owner> {
  const caller = ctx.caller;
  const tenant = input.tenant_id ? await getTenant(ctx.db, input.tenant_id) : undefined;
  if (input.tenant_id) await authorize(ctx, permission, tenantScope(tenant), { what: "Tenant", addressedBy: "param" });
  if (caller.type === "user") {
    const sent = (["tenant_id", "external_subject_id"] as const).filter((k) => input[k] !== undefined);
    if (sent.length) {
      throw badRequest("A signed-in user connects their own accounts: tenant_id and external_subject_id are for API keys", sent.map((k) => ({ path: `${where}.${k}`, message: "Not accepted with a user session" })));
    }
    return userOwner(caller.user.id);
  }
  const missing = (["tenant_id", "external_subject_id"] as const).filter((k) => !input[k]);
  if (missing.length) {
    throw badRequest("An API key acts for one end user: tenant_id and external_subject_id are required", missing.map((k) => ({ path: `${where}.${k}`, message: "Required with an API key" })));
  }
  return extOwner(tenant!, input.external_subject_id!);
}

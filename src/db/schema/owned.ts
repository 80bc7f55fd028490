import { text } from "drizzle-orm/sqlite-core";
import { environmentOwned, tenants } from "./organizations";

/**
 * The ids that place a row in one tenant, for tables of tenant-owned resources. Each is removed with
 * its owner (deleting an organization, environment or tenant cascades), and every query of such a
 * table filters by them (see src/auth/load.ts).
 */
export const tenantOwned = () => ({
  ...environmentOwned(),
  tenantId: text("tenant_id").notNull().references(() => tenants.id, { onDelete: "cascade" }),
});

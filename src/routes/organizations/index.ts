import { createRouter } from "../../lib/router";
import { memberRoutes } from "./members";
import { organizationRoutes as organizationCrudRoutes } from "./organizations";

/** Organizations, their members and invitations (specification, "Organizations"). */
export const organizationRoutes = createRouter().route("/", organizationCrudRoutes).route("/", memberRoutes);

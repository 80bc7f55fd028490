import { createRouter } from "../../lib/router";
import { creditRoutes } from "./credits";
import { usageRoutes } from "./usage";

/** Billing: credits of organizations and tenants, and usage records (specification, "Billing"). */
export const billingRoutes = createRouter().route("/", creditRoutes).route("/", usageRoutes);

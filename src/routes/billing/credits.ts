import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { toMicro } from "../../lib/credits";
import { jsonBody, jsonContent, Timestamp } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { addOrganizationCredits, allocateToTenant, organizationBilling, tenantCredits } from "../../services/billing/credits";
import { organizationFor } from "../../services/organizations";
import { tenantFor } from "../../services/tenants";
import { routesTagged } from "../define-route";

export const TenantCreditsSchema = z
  .object({
    tenant_id: z.string(),
    credits_pool: z.number(),
    credits_used: z.number(),
    credits_available: z.number().openapi({ description: "credits_pool - credits_used" }),
  })
  .openapi("TenantCredits");

export const OrganizationBillingSchema = z
  .object({
    organization_id: z.string(),
    period: z.object({ start: Timestamp, end: Timestamp }).openapi({ description: "The current calendar month (UTC)" }),
    status: z.enum(["active", "inactive", "suspended"]),
    total_credits: z.number(),
    allocated_credits: z.number(),
    used_credits: z.number(),
    available_credits: z.number().openapi({ description: "total_credits - allocated_credits" }),
    tenants: z.array(TenantCreditsSchema.extend({ name: z.string() })),
  })
  .openapi("OrganizationBilling");

/** Credit amounts per write: greater than 0, at most 1,000,000 (specification, "Limits"). */
const AmountBody = z.object({
  amount: z.number().gt(0).max(1_000_000).openapi({ example: 100 }),
});

const route = routesTagged(["Billing"]);

export const creditRoutes = createRouter();

const getTenantCredits = route("get", "/billing/tenants/{tenantId}/credits", "tenant_billing:read", {
  operationId: "getTenantCredits", summary: "A tenant's credit balance",
  responses: { 200: jsonContent(TenantCreditsSchema, "The balance") },
});
creditRoutes.openapi(getTenantCredits, async (c) => {
  const tenant = await tenantFor(ctxOf(c), c.req.valid("param").tenantId, "tenant_billing:read");
  return c.json(tenantCredits(tenant), 200);
});

const allocate = route("post", "/billing/tenants/{tenantId}/credits", "billing:write", {
  operationId: "allocateTenantCredits",
  summary: "Move available organization credits into a tenant's pool (owner, billing_admin)",
  description: "400 `insufficient_organization_credits` when the organization has fewer available credits than `amount`.",
  request: { body: jsonBody(AmountBody) },
  responses: { 200: jsonContent(TenantCreditsSchema, "The tenant's new balance") },
});
creditRoutes.openapi(allocate, async (c) => {
  const tenant = await tenantFor(ctxOf(c), c.req.valid("param").tenantId, "billing:write");
  const updated = await allocateToTenant(c.get("db"), tenant, toMicro(c.req.valid("json").amount));
  return c.json(tenantCredits(updated), 200);
});

const addOrgCredits = route("post", "/billing/organizations/{orgId}/credits", "billing:write", {
  operationId: "addOrganizationCredits", summary: "Add credits to the organization's pool (owner, billing_admin)",
  request: { body: jsonBody(AmountBody) },
  responses: { 200: jsonContent(OrganizationBillingSchema, "The organization's billing record") },
});
creditRoutes.openapi(addOrgCredits, async (c) => {
  const { organization } = await organizationFor(ctxOf(c), c.req.valid("param").orgId, "billing:write");
  const updated = await addOrganizationCredits(c.get("db"), organization.id, toMicro(c.req.valid("json").amount));
  return c.json(await organizationBilling(c.get("db"), updated), 200);
});

const getOrgBilling = route("get", "/billing/organizations/{orgId}", "billing:read", {
  operationId: "getOrganizationBilling", summary: "Billing record: period, totals and per-tenant allocation and usage",
  responses: { 200: jsonContent(OrganizationBillingSchema, "The billing record") },
});
creditRoutes.openapi(getOrgBilling, async (c) => {
  const { organization } = await organizationFor(ctxOf(c), c.req.valid("param").orgId, "billing:read");
  return c.json(await organizationBilling(c.get("db"), organization), 200);
});

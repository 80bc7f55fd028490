import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { toMicro } from "../../lib/credits";
import { errorResponses, jsonBody, jsonContent, Timestamp, userOnly, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import {
  addOrganizationCredits,
  allocateToTenant,
  organizationBilling,
  tenantCredits,
} from "../../services/billing/credits";
import { organizationFor } from "../../services/organizations";
import { tenantFor } from "../../services/tenants";

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

const TenantIdParam = z.object({ tenantId: z.string().min(1).max(128).openapi({ param: { name: "tenantId", in: "path" } }) });
const OrgIdParam = z.object({ orgId: z.string().min(1).max(128).openapi({ param: { name: "orgId", in: "path" } }) });

const tags = ["Billing"];

export const creditRoutes = createRouter();

const getTenantCredits = createRoute({
  method: "get",
  path: "/billing/tenants/{tenantId}/credits",
  tags,
  operationId: "getTenantCredits",
  ...routePermission("tenant_billing:read"),
  summary: "A tenant's credit balance",
  security: userOrKey,
  request: { params: TenantIdParam },
  responses: { 200: jsonContent(TenantCreditsSchema, "The balance"), ...errorResponses },
});
creditRoutes.openapi(getTenantCredits, async (c) => {
  const tenant = await tenantFor(c, c.req.valid("param").tenantId, "tenant_billing:read");
  return c.json(tenantCredits(tenant), 200);
});

const allocate = createRoute({
  method: "post",
  path: "/billing/tenants/{tenantId}/credits",
  tags,
  operationId: "allocateTenantCredits",
  ...routePermission("billing:write"),
  summary: "Move available organization credits into a tenant's pool (owner, billing_admin)",
  description: "400 `insufficient_organization_credits` when the organization has fewer available credits than `amount`.",
  security: userOnly,
  request: { params: TenantIdParam, body: jsonBody(AmountBody) },
  responses: { 200: jsonContent(TenantCreditsSchema, "The tenant's new balance"), ...errorResponses },
});
creditRoutes.openapi(allocate, async (c) => {
  const tenant = await tenantFor(c, c.req.valid("param").tenantId, "billing:write");
  const updated = await allocateToTenant(c.get("db"), tenant, toMicro(c.req.valid("json").amount));
  return c.json(tenantCredits(updated), 200);
});

const addOrgCredits = createRoute({
  method: "post",
  path: "/billing/organizations/{orgId}/credits",
  tags,
  operationId: "addOrganizationCredits",
  ...routePermission("billing:write"),
  summary: "Add credits to the organization's pool (owner, billing_admin)",
  security: userOnly,
  request: { params: OrgIdParam, body: jsonBody(AmountBody) },
  responses: { 200: jsonContent(OrganizationBillingSchema, "The organization's billing record"), ...errorResponses },
});
creditRoutes.openapi(addOrgCredits, async (c) => {
  const { organization } = await organizationFor(c, c.req.valid("param").orgId, "billing:write");
  const updated = await addOrganizationCredits(c.get("db"), organization.id, toMicro(c.req.valid("json").amount));
  return c.json(await organizationBilling(c.get("db"), updated), 200);
});

const getOrgBilling = createRoute({
  method: "get",
  path: "/billing/organizations/{orgId}",
  tags,
  operationId: "getOrganizationBilling",
  ...routePermission("billing:read"),
  summary: "Billing record: period, totals and per-tenant allocation and usage",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: { 200: jsonContent(OrganizationBillingSchema, "The billing record"), ...errorResponses },
});
creditRoutes.openapi(getOrgBilling, async (c) => {
  const { organization } = await organizationFor(c, c.req.valid("param").orgId, "billing:read");
  return c.json(await organizationBilling(c.get("db"), organization), 200);
});

import { createRoute, z } from "@hono/zod-openapi";
import { authorize, requireUser } from "../../auth/authorize";
import { toMicro } from "../../lib/credits";
import { notFound } from "../../lib/errors";
import { errorResponses, jsonBody, jsonContent, Timestamp, userOnly, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import {
  addOrganizationCredits,
  allocateToTenant,
  organizationBilling,
  tenantCredits,
} from "../../services/billing/credits";
import { getOrganization } from "../../services/organizations";
import { getTenant, tenantScope } from "../../services/tenants";

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

const getTenantCredits = createRoute({
  method: "get",
  path: "/billing/tenants/{tenantId}/credits",
  tags,
  operationId: "getTenantCredits",
  summary: "A tenant's credit balance",
  security: userOrKey,
  request: { params: TenantIdParam },
  responses: { 200: jsonContent(TenantCreditsSchema, "The balance"), ...errorResponses },
});

const allocate = createRoute({
  method: "post",
  path: "/billing/tenants/{tenantId}/credits",
  tags,
  operationId: "allocateTenantCredits",
  summary: "Move available organization credits into a tenant's pool (owner, billing_admin)",
  description: "400 `insufficient_organization_credits` when the organization has fewer available credits than `amount`.",
  security: userOnly,
  request: { params: TenantIdParam, body: jsonBody(AmountBody) },
  responses: { 200: jsonContent(TenantCreditsSchema, "The tenant's new balance"), ...errorResponses },
});

const addOrgCredits = createRoute({
  method: "post",
  path: "/billing/organizations/{orgId}/credits",
  tags,
  operationId: "addOrganizationCredits",
  summary: "Add credits to the organization's pool (owner, billing_admin)",
  security: userOnly,
  request: { params: OrgIdParam, body: jsonBody(AmountBody) },
  responses: { 200: jsonContent(OrganizationBillingSchema, "The organization's billing record"), ...errorResponses },
});

const getOrgBilling = createRoute({
  method: "get",
  path: "/billing/organizations/{orgId}",
  tags,
  operationId: "getOrganizationBilling",
  summary: "Billing record: period, totals and per-tenant allocation and usage",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: { 200: jsonContent(OrganizationBillingSchema, "The billing record"), ...errorResponses },
});

export const creditRoutes = createRouter()
  .openapi(getTenantCredits, async (c) => {
    const tenant = await getTenant(c.get("db"), c.req.valid("param").tenantId);
    await authorize(c, "tenant_billing:read", tenantScope(tenant), { what: "Tenant" });
    return c.json(tenantCredits(tenant!), 200);
  })
  .openapi(allocate, async (c) => {
    requireUser(c);
    const db = c.get("db");
    const tenant = await getTenant(db, c.req.valid("param").tenantId);
    await authorize(c, "billing:write", tenantScope(tenant), { what: "Tenant" });
    const updated = await allocateToTenant(db, tenant!, toMicro(c.req.valid("json").amount));
    return c.json(tenantCredits(updated), 200);
  })
  .openapi(addOrgCredits, async (c) => {
    requireUser(c);
    const { orgId } = c.req.valid("param");
    await authorize(c, "billing:write", { organizationId: orgId }, { what: "Organization" });
    const db = c.get("db");
    await addOrganizationCredits(db, orgId, toMicro(c.req.valid("json").amount));
    const org = await getOrganization(db, orgId);
    if (!org) throw notFound("Organization");
    return c.json(await organizationBilling(db, org), 200);
  })
  .openapi(getOrgBilling, async (c) => {
    requireUser(c);
    const { orgId } = c.req.valid("param");
    await authorize(c, "billing:read", { organizationId: orgId }, { what: "Organization" });
    const db = c.get("db");
    const org = await getOrganization(db, orgId);
    if (!org) throw notFound("Organization");
    return c.json(await organizationBilling(db, org), 200);
  });

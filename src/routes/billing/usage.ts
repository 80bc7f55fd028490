import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { authorize } from "../../auth/authorize";
import { USAGE_OPERATIONS } from "../../db/schema";
import { badRequest } from "../../lib/errors";
import { jsonContent, pageBody, pageSchema, queryBoolean, Timestamp } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { publicUsageLog, type UsageFilter, usageLogsPage, usageSummary } from "../../services/billing/usage";
import { tenantFor } from "../../services/tenants";
import { routesTagged } from "../define-route";

const DateParam = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "Expected YYYY-MM-DD")
  .refine((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s), "Not a calendar date");

const FilterQuery = z.object({
  start_date: DateParam.optional().openapi({ description: "Inclusive, UTC (YYYY-MM-DD)" }),
  end_date: DateParam.optional().openapi({ description: "Inclusive, UTC (YYYY-MM-DD)" }),
  api_key_id: z.string().min(1).max(128).optional(),
  is_api_key: queryBoolean.optional().openapi({ description: "true: only API-key-driven usage; false: only user-session usage" }),
});

const LogsQuery = FilterQuery.extend({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
});

export const UsageSummarySchema = z
  .object({
    credits_used: z.number(),
    total_tokens: z.number().int(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    message_count: z.number().int().openapi({ description: "Metered answers: chat turns, fast queries, agent turns" }),
  })
  .openapi("UsageSummary");

export const UsageLogSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    tenant_id: z.string(),
    operation: z.enum(USAGE_OPERATIONS),
    model: z.string(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    total_tokens: z.number().int(),
    credits_used: z.number(),
    chat_id: z.string().nullable(),
    message_id: z.string().nullable(),
    agent_run_id: z.string().nullable(),
    api_key_id: z.string().nullable(),
    is_api_key: z.boolean(),
    created_at: Timestamp,
  })
  .openapi("UsageLog");

const LogsPage = pageSchema("logs", UsageLogSchema);

function filterOf(q: z.infer<typeof FilterQuery>): UsageFilter {
  if (q.start_date && q.end_date && q.start_date > q.end_date) {
    throw badRequest("start_date must not be after end_date", [{ path: "query.start_date", message: "After end_date" }]);
  }
  return { startDate: q.start_date, endDate: q.end_date, apiKeyId: q.api_key_id, isApiKey: q.is_api_key };
}

const route = routesTagged(["Billing"]);

export const usageRoutes = createRouter();

const tenantSummary = route("get", "/billing/tenants/{tenantId}/usage/summary", "tenant_billing:read", {
  operationId: "getTenantUsageSummary", summary: "A tenant's aggregate credits, tokens and message count",
  description: "Accepts the same optional filters as the logs; without filters it covers all time and equals `credits_used`.",
  request: { query: FilterQuery }, responses: { 200: jsonContent(UsageSummarySchema, "Totals") },
});
usageRoutes.openapi(tenantSummary, async (c) => {
  const tenant = await tenantFor(ctxOf(c), c.req.valid("param").tenantId, "tenant_billing:read");
  return c.json(await usageSummary(c.get("db"), { ...filterOf(c.req.valid("query")), tenantId: tenant.id }), 200);
});

const tenantLogs = route("get", "/billing/tenants/{tenantId}/usage/logs", "tenant_billing:read", {
  operationId: "listTenantUsageLogs", summary: "A tenant's request-level usage records, newest first",
  request: { query: LogsQuery }, responses: { 200: jsonContent(LogsPage, "Usage records") },
});
usageRoutes.openapi(tenantLogs, async (c) => {
  const q = c.req.valid("query");
  const tenant = await tenantFor(ctxOf(c), c.req.valid("param").tenantId, "tenant_billing:read");
  const page = await usageLogsPage(c.get("db"), { ...filterOf(q), tenantId: tenant.id }, q);
  return c.json(pageBody("logs", page, q, publicUsageLog), 200);
});

const orgSummary = route("get", "/billing/organizations/{orgId}/usage/summary", "billing:read", {
  operationId: "getOrganizationUsageSummary",
  summary: "Aggregate credit, token and message totals across the organization's tenants",
  request: { query: FilterQuery }, responses: { 200: jsonContent(UsageSummarySchema, "Totals") },
});
usageRoutes.openapi(orgSummary, async (c) => {
  const { orgId } = c.req.valid("param");
  await authorize(ctxOf(c), "billing:read", { organizationId: orgId }, { what: "Organization" });
  return c.json(await usageSummary(c.get("db"), { ...filterOf(c.req.valid("query")), organizationId: orgId }), 200);
});

const orgLogs = route("get", "/billing/organizations/{orgId}/usage/logs", "billing:read", {
  operationId: "listOrganizationUsageLogs", summary: "Usage records across the organization, newest first",
  request: { query: LogsQuery.extend({ tenant_id: z.string().min(1).max(128).optional() }) },
  responses: { 200: jsonContent(LogsPage, "Usage records") },
});
usageRoutes.openapi(orgLogs, async (c) => {
  const { orgId } = c.req.valid("param");
  const q = c.req.valid("query");
  await authorize(ctxOf(c), "billing:read", { organizationId: orgId }, { what: "Organization" });
  const page = await usageLogsPage(c.get("db"), { ...filterOf(q), organizationId: orgId, tenantId: q.tenant_id }, q);
  return c.json(pageBody("logs", page, q, publicUsageLog), 200);
});

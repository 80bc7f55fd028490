import { and, desc, eq, gte, inArray, lt, sql, sum, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { MESSAGE_OPERATIONS, usageLogs, type UsageLog } from "../../db/schema";
import { fromMicro } from "../../lib/credits";
import { pageOf, type Page } from "../../db/page";

export interface UsageFilter {
  organizationId?: string;
  tenantId?: string;
  /** Inclusive calendar dates (UTC), YYYY-MM-DD. */
  startDate?: string;
  endDate?: string;
  apiKeyId?: string;
  isApiKey?: boolean;
}

function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

function where(f: UsageFilter): SQL | undefined {
  const conds: SQL[] = [];
  if (f.organizationId) conds.push(eq(usageLogs.organizationId, f.organizationId));
  if (f.tenantId) conds.push(eq(usageLogs.tenantId, f.tenantId));
  if (f.startDate) conds.push(gte(usageLogs.createdAt, `${f.startDate}T00:00:00.000Z`));
  if (f.endDate) conds.push(lt(usageLogs.createdAt, nextDay(f.endDate)));
  if (f.apiKeyId) conds.push(eq(usageLogs.apiKeyId, f.apiKeyId));
  if (f.isApiKey !== undefined) conds.push(eq(usageLogs.isApiKey, f.isApiKey));
  return conds.length ? and(...conds) : undefined;
}

export async function usageSummary(db: Database, f: UsageFilter) {
  const row = await db
    .select({
      credits: sum(usageLogs.creditsUsed),
      total: sum(usageLogs.totalTokens),
      input: sum(usageLogs.inputTokens),
      output: sum(usageLogs.outputTokens),
      messages: sql<number>`COALESCE(SUM(CASE WHEN ${inArray(usageLogs.operation, [...MESSAGE_OPERATIONS])} THEN 1 ELSE 0 END), 0)`,
    })
    .from(usageLogs)
    .where(where(f))
    .get();
  return {
    credits_used: fromMicro(Number(row?.credits ?? 0)),
    total_tokens: Number(row?.total ?? 0),
    input_tokens: Number(row?.input ?? 0),
    output_tokens: Number(row?.output ?? 0),
    message_count: Number(row?.messages ?? 0),
  };
}

export function publicUsageLog(l: UsageLog) {
  return {
    id: l.id,
    organization_id: l.organizationId,
    tenant_id: l.tenantId,
    operation: l.operation,
    model: l.model,
    input_tokens: l.inputTokens,
    output_tokens: l.outputTokens,
    total_tokens: l.totalTokens,
    credits_used: fromMicro(l.creditsUsed),
    chat_id: l.chatId,
    message_id: l.messageId,
    agent_run_id: l.agentRunId,
    api_key_id: l.apiKeyId,
    is_api_key: l.isApiKey,
    created_at: l.createdAt,
  };
}

export function usageLogsPage(db: Database, f: UsageFilter, page: Page) {
  return pageOf(db, usageLogs, where(f), [desc(usageLogs.createdAt), desc(usageLogs.id)], page);
}

import { eq } from "drizzle-orm";
import type { Actor } from "../../contracts/tools";
import type { Caller } from "../../contracts/caller";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { tenants, type UsageOperation } from "../../db/schema";
import { fromMicro } from "../../lib/credits";
import { ApiError, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { priceMicro, type ModelPricing } from "../models/registry";
export type { Actor } from "../../contracts/tools";

/**
 * THE metering path. Every credit-consuming operation (chat turns, fast
 * queries, improve-prompt, follow-up questions, summaries, paid embeddings,
 * agent runs, memory extraction) calls `assertCanSpend` before any model call
 * and `recordUsage` after it.
 *
 * recordUsage writes the charge and its usage-log record in ONE D1 batch (a
 * transaction): a failure can never leave a charge without a record or a record
 * without a charge. The charge is a relative `credits_used = credits_used + x`
 * update, so concurrent turns never lose a charge. A turn that has started is
 * charged in full even if it takes the tenant below zero; the next one is
 * refused by assertCanSpend (402).
 */

/** The identity behind a metered call, as stored on usage logs. */

export function actorOf(caller: Caller | null | undefined): Actor {
  if (!caller) return {};
  return caller.type === "api_key" ? { apiKeyId: caller.key.id } : { userId: caller.user.id };
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface UsageRecordInput {
  organizationId: string;
  tenantId: string;
  operation: UsageOperation;
  model: string;
  pricing: ModelPricing;
  usage: Usage;
  /** Who drove the call: recorded on the usage log (api_key_id / is_api_key). */
  actor?: Actor | null;
  chatId?: string | null;
  messageId?: string | null;
  agentRunId?: string | null;
  /** Makes the charge idempotent: recording the same key twice charges once. */
  idempotencyKey?: string | null;
}

export interface RecordedUsage {
  id: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Credits charged (decimal). */
  credits: number;
  /** False when the idempotency key had already been recorded (nothing charged now). */
  charged: boolean;
}

/** Refuses new model work for a tenant with no available credits (402). */
export async function assertCanSpend(db: Database, tenantId: string): Promise<void> {
  const t = await db
    .select({ pool: tenants.creditsPool, used: tenants.creditsUsed })
    .from(tenants)
    .where(eq(tenants.id, tenantId))
    .get();
  if (!t) throw notFound("Tenant");
  if (t.pool - t.used <= 0) {
    throw new ApiError(
      "insufficient_credits",
      `The tenant has no available credits (pool ${fromMicro(t.pool)}, used ${fromMicro(t.used)}); allocate more credits to continue`,
    );
  }
}

/** A checkpointed charge: the turn's one log row takes the newest amount (chargeStatements). */
const CHECKPOINT_UPSERT = `ON CONFLICT (idempotency_key) DO UPDATE SET input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
  total_tokens = excluded.total_tokens, credits_used = excluded.credits_used,
  agent_run_id = COALESCE(usage_logs.agent_run_id, excluded.agent_run_id)`;

/** The usage-log row of a charge (both recordUsage and chargeStatements write it; `onConflict` for checkpoints). */
function usageLogInsert(
  d1: D1Database,
  id: string,
  input: UsageRecordInput,
  n: { inputTokens: number; outputTokens: number; micro: number },
  onConflict = "",
): D1PreparedStatement {
  const apiKeyId = input.actor?.apiKeyId ?? null;
  return d1
    .prepare(
      `INSERT INTO usage_logs (id, organization_id, tenant_id, operation, model, input_tokens, output_tokens,
         total_tokens, credits_used, chat_id, message_id, agent_run_id, api_key_id, is_api_key, user_id,
         idempotency_key, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17) ${onConflict}`,
    )
    .bind(
      id, input.organizationId, input.tenantId, input.operation, input.model, n.inputTokens, n.outputTokens,
      n.inputTokens + n.outputTokens, n.micro, input.chatId ?? null, input.messageId ?? null, input.agentRunId ?? null,
      apiKeyId, apiKeyId ? 1 : 0, input.actor?.userId ?? null, input.idempotencyKey ?? null, nowIso(),
    );
}

const nonNegativeInt = (n: number) => (Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

export async function recordUsage(db: Database, input: UsageRecordInput): Promise<RecordedUsage> {
  const inputTokens = nonNegativeInt(input.usage.input_tokens);
  const outputTokens = nonNegativeInt(input.usage.output_tokens);
  const micro = priceMicro(input.pricing, { input_tokens: inputTokens, output_tokens: outputTokens });
  const id = newId("use");
  const d1 = db.$client;
  const result: RecordedUsage = {
    id,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    credits: fromMicro(micro),
    charged: true,
  };
  try {
    await d1.batch([
      // The log row goes first: with an idempotency key already used, the
      // UNIQUE constraint aborts the whole batch and nothing is charged.
      usageLogInsert(d1, id, input, { inputTokens, outputTokens, micro }),
      d1.prepare("UPDATE tenants SET credits_used = credits_used + ?1 WHERE id = ?2").bind(micro, input.tenantId),
      // A tenant deleted while its turn ran: the charge lands on the
      // organization's retired credits, so organization totals still add up.
      d1
        .prepare("UPDATE organizations SET credits_retired = credits_retired + ?1 WHERE id = ?2 AND changes() = 0")
        .bind(micro, input.organizationId),
    ]);
  } catch (e) {
    if (input.idempotencyKey && isUniqueViolation(e)) return { ...result, credits: 0, charged: false };
    throw e;
  }
  return result;
}

/**
 * A charge that grows while its call runs (a streamed answer, checkpointed as it goes): statements that make
 * what `idempotencyKey` is charged equal to `input.usage`, charging the tenant only the difference from what was
 * charged under that key before. Batched with the writes that go with it (the answer's text), any number of
 * checkpoints and the final write charge the final amount exactly once, and the usage log always matches the
 * tenant's counter. Nothing is written until the caller runs the batch.
 */
export function chargeStatements(d1: D1Database, input: UsageRecordInput & { idempotencyKey: string }): { statements: D1PreparedStatement[]; recorded: RecordedUsage } {
  const inputTokens = nonNegativeInt(input.usage.input_tokens);
  const outputTokens = nonNegativeInt(input.usage.output_tokens);
  const micro = priceMicro(input.pricing, { input_tokens: inputTokens, output_tokens: outputTokens });
  const id = newId("use");
  const delta = "(?1 - COALESCE((SELECT credits_used FROM usage_logs WHERE idempotency_key = ?2), 0))";
  const statements = [
    d1.prepare(`UPDATE tenants SET credits_used = credits_used + ${delta} WHERE id = ?3`).bind(micro, input.idempotencyKey, input.tenantId),
    // A tenant deleted while the call ran: the charge lands on the organization's retired credits (as recordUsage).
    d1
      .prepare(`UPDATE organizations SET credits_retired = credits_retired + ${delta} WHERE id = ?3 AND changes() = 0`)
      .bind(micro, input.idempotencyKey, input.organizationId),
    usageLogInsert(d1, id, input, { inputTokens, outputTokens, micro }, CHECKPOINT_UPSERT),
  ];
  const recorded = { id, input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens, credits: fromMicro(micro), charged: true };
  return { statements, recorded };
}

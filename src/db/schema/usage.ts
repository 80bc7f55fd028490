import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns";
import { organizations } from "./organizations";

export const USAGE_OPERATIONS = [
  "chat",
  "fast_query",
  "improve_prompt",
  "follow_up",
  "summary",
  "agent_run",
  "embedding",
  "memory",
] as const;
export type UsageOperation = (typeof USAGE_OPERATIONS)[number];

/** Operations that produce an answer a user sees: they count as messages in summaries. */
export const MESSAGE_OPERATIONS: readonly UsageOperation[] = ["chat", "fast_query", "agent_run"];

export const usageLogs = sqliteTable("usage_logs", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  tenantId: text("tenant_id").notNull(),
  operation: text("operation", { enum: USAGE_OPERATIONS }).notNull(),
  model: text("model").notNull(),
  inputTokens: integer("input_tokens").notNull().default(0),
  outputTokens: integer("output_tokens").notNull().default(0),
  totalTokens: integer("total_tokens").notNull().default(0),
  creditsUsed: integer("credits_used").notNull().default(0),
  chatId: text("chat_id"),
  messageId: text("message_id"),
  agentRunId: text("agent_run_id"),
  apiKeyId: text("api_key_id"),
  isApiKey: integer("is_api_key", { mode: "boolean" }).notNull().default(false),
  userId: text("user_id"),
  idempotencyKey: text("idempotency_key").unique(),
  createdAt: createdAt(),
});

export type UsageLog = typeof usageLogs.$inferSelect;

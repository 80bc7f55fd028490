import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./identity";
import { knowledgeBases } from "./knowledge-bases";
import { apiKeys } from "./organizations";
import { tenantOwned } from "./owned";

/** Embed tokens (migrations/0012_embed.sql): short-lived browser credentials, stored as a hash. */
export const embedTokens = sqliteTable("embed_tokens", {
  id: text("id").primaryKey(),
  tokenHash: text("token_hash").notNull().unique(),
  prefix: text("prefix").notNull(),
  ...tenantOwned(),
  knowledgeBaseId: text("knowledge_base_id").notNull().references(() => knowledgeBases.id, { onDelete: "cascade" }),
  externalSubjectId: text("external_subject_id"),
  allowedOrigins: text("allowed_origins", { mode: "json" }).$type<string[]>().notNull(),
  createdByApiKeyId: text("created_by_api_key_id").references(() => apiKeys.id, { onDelete: "cascade" }),
  createdByUserId: text("created_by_user_id").references(() => users.id, { onDelete: "cascade" }),
  expiresAt: text("expires_at").notNull(),
  createdAt: text("created_at").notNull(),
});

export type EmbedToken = typeof embedTokens.$inferSelect;

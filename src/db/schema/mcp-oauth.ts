import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns";
import { users } from "./identity";
import { tenantOwned } from "./owned";

/**
 * The grants members approved for OAuth clients of the knowledge-base MCP endpoint
 * (migrations/0018_mcp_oauth_grants.sql). Tokens live in OAUTH_KV; a token is honoured only while
 * its row exists (src/services/mcp-oauth/grants.ts).
 */
export const mcpOAuthGrants = sqliteTable("mcp_oauth_grants", {
  id: text("id").primaryKey(),
  providerGrantId: text("provider_grant_id"),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  ...tenantOwned(),
  knowledgeBaseIds: text("knowledge_base_ids", { mode: "json" }).$type<string[]>().notNull(),
  clientId: text("client_id").notNull(),
  clientName: text("client_name").notNull(),
  redirectHost: text("redirect_host").notNull(),
  scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
  createdAt: createdAt(),
  expiresAt: text("expires_at").notNull(),
});

export type McpOAuthGrant = typeof mcpOAuthGrants.$inferSelect;

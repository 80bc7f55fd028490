import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { organizations } from "./organizations";
import { timestamps } from "./columns";

export const MCP_STATUSES = ["pending", "ready", "needs_auth", "error"] as const;
export const MCP_AUTH = ["none", "credentials", "oauth"] as const;
export type McpStatus = (typeof MCP_STATUSES)[number];

export interface McpToolManifestEntry {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** MCP tool servers of an organization (migrations/0009_mcp.sql). `*_enc` columns are sealed secrets. */
export const mcpServers = sqliteTable("mcp_servers", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  url: text("url").notNull(),
  auth: text("auth", { enum: MCP_AUTH }).notNull().default("none"),
  status: text("status", { enum: MCP_STATUSES }).notNull().default("pending"),
  lastError: text("last_error"),
  transport: text("transport"),
  toolCount: integer("tool_count").notNull().default(0),
  manifest: text("manifest", { mode: "json" }).$type<McpToolManifestEntry[]>().notNull().default([]),
  manifestRefreshedAt: text("manifest_refreshed_at"),
  credentialsEnc: text("credentials_enc"),
  oauthClientEnc: text("oauth_client_enc"),
  oauthDiscovery: text("oauth_discovery", { mode: "json" }).$type<Record<string, unknown> | null>(),
  oauthResourceMetadataUrl: text("oauth_resource_metadata_url"),
  oauthTokensEnc: text("oauth_tokens_enc"),
  oauthTokenExpiresAt: integer("oauth_token_expires_at"),
  oauthTokenVersion: integer("oauth_token_version").notNull().default(0),
  oauthStateNonce: text("oauth_state_nonce"),
  oauthVerifierEnc: text("oauth_verifier_enc"),
  oauthScope: text("oauth_scope"),
  refreshLeaseUntil: integer("refresh_lease_until"),
  createdBy: text("created_by"),
  ...timestamps(),
});

export type McpServer = typeof mcpServers.$inferSelect;

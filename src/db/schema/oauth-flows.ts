import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/** An OAuth authorization (connector or MCP server) bound to the browser that opened it (src/services/oauth-flows.ts). */
export const oauthBrowserFlows = sqliteTable("oauth_browser_flows", {
  id: text("id").primaryKey(),
  kind: text("kind", { enum: ["connector", "mcp"] }).notNull(),
  /** sha256 of the OAuth state the provider sends back. */
  stateHash: text("state_hash").notNull(),
  authorizeUrl: text("authorize_url").notNull(),
  /** sha256 of the cookie set in the browser that opened the flow; null until opened. */
  browserHash: text("browser_hash"),
  /** The signed-in user who started it (null for an API key acting for an end user): only their browser may open it. */
  userId: text("user_id"),
  expiresAt: text("expires_at").notNull(),
  createdAt: text("created_at").notNull(),
});

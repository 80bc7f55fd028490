import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./identity";
import { organizations, tenants } from "./organizations";

export const CONNECTION_REASONS = ["expired", "revoked", "scope_missing"] as const;
export type ConnectionReason = (typeof CONNECTION_REASONS)[number];

/** A third-party account connected by one owner (a user, or a tenant's external subject). Tokens sealed. */
export const connectorConnections = sqliteTable("connector_connections", {
  id: text("id").primaryKey(),
  ownerKey: text("owner_key").notNull(),
  userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
  organizationId: text("organization_id").references(() => organizations.id, { onDelete: "cascade" }),
  tenantId: text("tenant_id").references(() => tenants.id, { onDelete: "cascade" }),
  externalSubjectId: text("external_subject_id"),
  slug: text("slug").notNull(),
  status: text("status", { enum: ["connected", "disconnected"] }).notNull().default("connected"),
  reason: text("reason", { enum: CONNECTION_REASONS }),
  account: text("account"),
  accountId: text("account_id"),
  accessToken: text("access_token").notNull(),
  refreshToken: text("refresh_token"),
  tokenExpiresAt: text("token_expires_at"),
  scopes: text("scopes"),
  extra: text("extra").notNull().default("{}"),
  refreshLockUntil: text("refresh_lock_until"),
  connectedAt: text("connected_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** A pending authorization: the server half of a signed, single-use state. */
export const connectorOauthStates = sqliteTable("connector_oauth_states", {
  id: text("id").primaryKey(),
  ownerKey: text("owner_key").notNull(),
  slug: text("slug").notNull(),
  codeVerifier: text("code_verifier"),
  redirectUrl: text("redirect_url").notNull(),
  expiresAt: text("expires_at").notNull(),
  createdAt: text("created_at").notNull(),
});

export type ConnectorConnection = typeof connectorConnections.$inferSelect;

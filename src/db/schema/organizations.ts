import { integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, timestamps } from "./columns";
import { users } from "./identity";

export const ROLES = ["owner", "billing_admin", "developer", "viewer"] as const;
export type Role = (typeof ROLES)[number];
export const INVITABLE_ROLES = ["billing_admin", "developer", "viewer"] as const;
export const ORG_STATUSES = ["active", "inactive", "suspended"] as const;
export const ORG_TYPES = ["business", "personal"] as const;

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  slug: text("slug").notNull().unique(),
  type: text("type", { enum: ORG_TYPES }).notNull().default("business"),
  status: text("status", { enum: ORG_STATUSES }).notNull().default("active"),
  creditsTotal: integer("credits_total").notNull().default(0),
  creditsRetired: integer("credits_retired").notNull().default(0),
  createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
  ...timestamps(),
});

export const organizationMembers = sqliteTable("organization_members", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  role: text("role", { enum: ROLES }).notNull(),
  ...timestamps(),
});

export const invitations = sqliteTable("invitations", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  email: text("email").notNull(),
  role: text("role", { enum: INVITABLE_ROLES }).notNull(),
  status: text("status", { enum: ["pending", "accepted", "revoked", "expired"] }).notNull().default("pending"),
  invitedBy: text("invited_by").references(() => users.id, { onDelete: "set null" }),
  acceptedBy: text("accepted_by").references(() => users.id, { onDelete: "set null" }),
  expiresAt: text("expires_at").notNull(),
  ...timestamps(),
});

export const environments = sqliteTable("environments", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
  /** https origins where connect flows may send the browser back (API-DECISIONS "Wave 3"). */
  allowedRedirectOrigins: text("allowed_redirect_origins", { mode: "json" }).$type<string[]>().notNull().default([]),
  ...timestamps(),
});

/** The ids that place a row in one environment; it is removed with its organization or environment. */
export const environmentOwned = () => ({
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  environmentId: text("environment_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
});

export const tenants = sqliteTable("tenants", {
  id: text("id").primaryKey(),
  ...environmentOwned(),
  name: text("name").notNull(),
  externalId: text("external_id"),
  externalName: text("external_name"),
  creditsPool: integer("credits_pool").notNull().default(0),
  creditsUsed: integer("credits_used").notNull().default(0),
  maxKnowledgeBases: integer("max_knowledge_bases").notNull().default(100),
  maxDocuments: integer("max_documents").notNull().default(10000),
  maxStorageGb: real("max_storage_gb").notNull().default(10),
  knowledgeBaseCount: integer("knowledge_base_count").notNull().default(0),
  documentCount: integer("document_count").notNull().default(0),
  storageUsedBytes: integer("storage_used_bytes").notNull().default(0),
  metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
  isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
  ...timestamps(),
});

export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  ...environmentOwned(),
  name: text("name").notNull(),
  prefix: text("prefix").notNull(),
  keyHash: text("key_hash").notNull().unique(),
  scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
  tenantIds: text("tenant_ids", { mode: "json" }).$type<string[]>().notNull().default([]),
  knowledgeBaseId: text("knowledge_base_id"),
  expiresAt: text("expires_at"),
  revokedAt: text("revoked_at"),
  lastUsedAt: text("last_used_at"),
  createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
  createdAt: createdAt(),
});

export type Organization = typeof organizations.$inferSelect;
export type Membership = typeof organizationMembers.$inferSelect;
export type Invitation = typeof invitations.$inferSelect;
export type Environment = typeof environments.$inferSelect;
export type Tenant = typeof tenants.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;

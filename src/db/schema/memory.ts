import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { chats, messages } from "./chats";
import { knowledgeBases } from "./knowledge-bases";
import { organizations, tenants } from "./organizations";
import { timestamps } from "./columns";

export const MEMORY_MODES = ["disabled", "durable"] as const;
export const MEMORY_RETENTIONS = ["none", "explicit_only", "automatic"] as const;
export const MEMORY_KINDS = ["fact", "preference", "instruction"] as const;
export type MemoryMode = (typeof MEMORY_MODES)[number];
export type MemoryRetention = (typeof MEMORY_RETENTIONS)[number];
export type MemoryKind = (typeof MEMORY_KINDS)[number];

export const tenantMemorySettings = sqliteTable("tenant_memory_settings", {
  tenantId: text("tenant_id").primaryKey().references(() => tenants.id, { onDelete: "cascade" }),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  mode: text("mode", { enum: MEMORY_MODES }).notNull().default("disabled"),
  retention: text("retention", { enum: MEMORY_RETENTIONS }).notNull().default("explicit_only"),
  updatedAt: text("updated_at").notNull(),
});

export const memories = sqliteTable("memories", {
  seq: integer("seq").primaryKey(),
  id: text("id").notNull().unique(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  tenantId: text("tenant_id").notNull().references(() => tenants.id, { onDelete: "cascade" }),
  knowledgeBaseId: text("knowledge_base_id").references(() => knowledgeBases.id, { onDelete: "cascade" }),
  subjectId: text("subject_id").notNull(),
  scopeKey: text("scope_key").notNull(),
  kind: text("kind", { enum: MEMORY_KINDS }).notNull(),
  content: text("content").notNull(),
  dedupeKey: text("dedupe_key").notNull(),
  entities: text("entities", { mode: "json" }).$type<string[]>().notNull().default([]),
  embedding: text("embedding"),
  embeddingModel: text("embedding_model"),
  sourceChatId: text("source_chat_id").references(() => chats.id, { onDelete: "cascade" }),
  sourceMessageId: text("source_message_id").references(() => messages.id, { onDelete: "set null" }),
  ...timestamps(),
});

export const memoryEntities = sqliteTable("memory_entities", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull().references(() => tenants.id, { onDelete: "cascade" }),
  knowledgeBaseId: text("knowledge_base_id").references(() => knowledgeBases.id, { onDelete: "cascade" }),
  scopeKey: text("scope_key").notNull(),
  name: text("name").notNull(),
  nameKey: text("name_key").notNull(),
  type: text("type").notNull(),
  createdAt: text("created_at").notNull(),
});

export const memoryEntityLinks = sqliteTable(
  "memory_entity_links",
  {
    memoryId: text("memory_id").notNull().references(() => memories.id, { onDelete: "cascade" }),
    entityId: text("entity_id").notNull().references(() => memoryEntities.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.memoryId, t.entityId] })],
);

export const memoryRelations = sqliteTable("memory_relations", {
  id: text("id").primaryKey(),
  memoryId: text("memory_id").notNull().references(() => memories.id, { onDelete: "cascade" }),
  sourceEntityId: text("source_entity_id").notNull().references(() => memoryEntities.id, { onDelete: "cascade" }),
  targetEntityId: text("target_entity_id").notNull().references(() => memoryEntities.id, { onDelete: "cascade" }),
  relation: text("relation").notNull(),
});

export type TenantMemorySettings = typeof tenantMemorySettings.$inferSelect;
export type Memory = typeof memories.$inferSelect;

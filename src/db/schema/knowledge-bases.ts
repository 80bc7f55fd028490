import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamps } from "./columns";
import { tenantOwned } from "./owned";

export const KB_STATUSES = ["active", "inactive"] as const;
export const KB_MEMORY_MODES = ["disabled", "subject", "kb_restricted"] as const;

export const knowledgeBases = sqliteTable("knowledge_bases", {
  id: text("id").primaryKey(),
  ...tenantOwned(),
  name: text("name").notNull(),
  description: text("description"),
  status: text("status", { enum: KB_STATUSES }).notNull().default("active"),
  kbMemoryMode: text("kb_memory_mode", { enum: KB_MEMORY_MODES }).notNull().default("disabled"),
  inboundDelegationEnabled: integer("inbound_delegation_enabled", { mode: "boolean" }).notNull().default(false),
  persona: text("persona"),
  instructions: text("instructions"),
  customPrompt: text("custom_prompt"),
  mainCustomPrompt: text("main_custom_prompt"),
  sqlCustomPrompt: text("sql_custom_prompt"),
  sqlAgentInstructions: text("sql_agent_instructions"),
  sqlAnsweringInstructions: text("sql_answering_instructions"),
  chartInstructions: text("chart_instructions"),
  embeddingModel: text("embedding_model"),
  embeddingDimensions: integer("embedding_dimensions"),
  /** Raised whenever a document enters or leaves search (migrations/0020_index_version.sql). */
  indexVersion: integer("index_version").notNull().default(0),
  createdBy: text("created_by"),
  ...timestamps(),
});

export type KnowledgeBase = typeof knowledgeBases.$inferSelect;

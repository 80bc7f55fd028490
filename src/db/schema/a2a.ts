import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { knowledgeBases } from "./knowledge-bases";
import { tenantOwned } from "./owned";
import { timestamps } from "./columns";

export const A2A_AGENT_STATUSES = ["ready", "error"] as const;

/** The parts of a fetched agent card the API shows (the whole card is kept in `card.raw`). */
export interface StoredAgentCard {
  name: string;
  description: string;
  url: string;
  version: string;
  protocol_version: string;
  skills: Array<{ id: string; name: string; description: string; tags: string[] }>;
  /** The card as the agent served it (public), used to build the client at call time. */
  raw: Record<string, unknown>;
}

/** A registered external agent (migrations/0013_a2a.sql). Headers and metadata are sealed envelopes. */
export const a2aAgents = sqliteTable("a2a_agents", {
  id: text("id").primaryKey(),
  ...tenantOwned(),
  knowledgeBaseId: text("knowledge_base_id").notNull().references(() => knowledgeBases.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  cardUrl: text("card_url").notNull(),
  description: text("description"),
  headersEnc: text("headers_enc"),
  metadataEnc: text("metadata_enc"),
  card: text("card", { mode: "json" }).$type<StoredAgentCard | null>(),
  status: text("status", { enum: A2A_AGENT_STATUSES }).notNull().default("ready"),
  lastError: text("last_error"),
  createdBy: text("created_by"),
  ...timestamps(),
});

export type A2aAgent = typeof a2aAgents.$inferSelect;

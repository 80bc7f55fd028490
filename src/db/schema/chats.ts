import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, timestamps } from "./columns";
import { users } from "./identity";
import { knowledgeBases } from "./knowledge-bases";
import { tenantOwned } from "./owned";

export const ACCESS_LEVELS = ["private", "org", "public"] as const;
export const AGENT_MODES = ["quick", "deep"] as const;
export const MESSAGE_STATUSES = ["complete", "partial", "error"] as const;

export interface ChatSettings {
  websearch_enable?: boolean;
  skill_ids?: string[];
  connector_slugs?: string[];
  delegate_agent_ids?: string[];
  enabled_mcp_server_ids?: string[];
  /** A chat created with a first message: that message's id and SHA-256 (a retried create finds its turn). */
  first_message?: { id: string; sha256: string };
}

export interface TodoItem {
  id: string;
  content: string;
  status: "pending" | "in_progress" | "completed";
}

export interface ChatTodo {
  items: TodoItem[];
  updated_at: string;
}

export const chats = sqliteTable("chats", {
  id: text("id").primaryKey(),
  ...tenantOwned(),
  knowledgeBaseId: text("knowledge_base_id").notNull().references(() => knowledgeBases.id, { onDelete: "cascade" }),
  model: text("model").notNull(),
  title: text("title"),
  accessLevel: text("access_level", { enum: ACCESS_LEVELS }).notNull().default("private"),
  ownerUserId: text("owner_user_id").references(() => users.id, { onDelete: "cascade" }),
  createdByApiKeyId: text("created_by_api_key_id"),
  externalSubjectId: text("external_subject_id"),
  agentMode: text("agent_mode", { enum: AGENT_MODES }).notNull().default("deep"),
  isQuery: integer("is_query", { mode: "boolean" }).notNull().default(false),
  sharedSourceChatId: text("shared_source_chat_id"),
  settings: text("settings", { mode: "json" }).$type<ChatSettings>().notNull().default({}),
  todo: text("todo", { mode: "json" }).$type<ChatTodo | null>(),
  summary: text("summary"),
  summaryThroughSeq: integer("summary_through_seq").notNull().default(0),
  terminatedAt: text("terminated_at"),
  terminationReason: text("termination_reason"),
  messageCount: integer("message_count").notNull().default(0),
  lastMessageAt: text("last_message_at"),
  /** The turn in flight: the id its answer is saved under and its lease, renewed while it runs (0015). */
  turnMessageId: text("turn_message_id"),
  turnLeaseExpiresAt: text("turn_lease_expires_at"),
  ...timestamps(),
});

/** Text found for a question: where it comes from, the text and its score. */
export interface FoundText {
  document_id: string | null;
  filename: string | null;
  chunk_id: string | null;
  text: string;
  score: number;
  page: number | null;
}

/** A found text as an answer cites it, `[index]`. */
export interface Source extends FoundText {
  index: number;
  url: string | null;
  /** A recalled memory cited as a source. */
  memory_id?: string;
}

/** What a turn used: tokens and credits. */
export interface TurnUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  credits: number;
}

export interface MessageMetadata {
  sources?: Source[];
  usage?: TurnUsage;
  model?: string;
  status?: (typeof MESSAGE_STATUSES)[number];
  memoryUsed?: boolean;
  delegatedAgentIds?: string[];
  imageUrls?: string[];
  attachedArtifactIds?: string[];
  error?: { code: string; message: string };
  [key: string]: unknown;
}

export const messages = sqliteTable("messages", {
  id: text("id").primaryKey(),
  chatId: text("chat_id").notNull().references(() => chats.id, { onDelete: "cascade" }),
  seq: integer("seq").notNull(),
  role: text("role", { enum: ["user", "assistant"] }).notNull(),
  content: text("content").notNull(),
  status: text("status", { enum: MESSAGE_STATUSES }).notNull().default("complete"),
  metadata: text("metadata", { mode: "json" }).$type<MessageMetadata>().notNull().default({}),
  createdAt: createdAt(),
});

export type Chat = typeof chats.$inferSelect;
export type Message = typeof messages.$inferSelect;

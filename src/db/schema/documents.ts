import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, timestamps } from "./columns";
import { knowledgeBases } from "./knowledge-bases";

export const DOCUMENT_STATUSES = ["pending_upload", "queued", "processing", "processed", "failed", "deleted"] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

/** Mirrors migrations/0003_documents.sql (triggers and the FTS table live only there). */
export const documents = sqliteTable("documents", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull(),
  environmentId: text("environment_id").notNull(),
  tenantId: text("tenant_id").notNull(),
  knowledgeBaseId: text("knowledge_base_id").notNull().references(() => knowledgeBases.id, { onDelete: "cascade" }),
  parentDocumentId: text("parent_document_id"),
  filename: text("filename").notNull(),
  mimeType: text("mime_type").notNull(),
  sizeBytes: integer("size_bytes").notNull(),
  status: text("status", { enum: DOCUMENT_STATUSES }).notNull(),
  error: text("error"),
  chunkCount: integer("chunk_count").notNull().default(0),
  pageCount: integer("page_count"),
  sourceUrl: text("source_url"),
  s3Key: text("s3_key").notNull(),
  ingestSeq: integer("ingest_seq").notNull().default(0),
  indexGeneration: integer("index_generation").notNull().default(0),
  attempts: integer("attempts").notNull().default(0),
  uploadExpiresAt: text("upload_expires_at"),
  uploadClaimedAt: text("upload_claimed_at"),
  /** Queued: by when its processing message must arrive; processing: by when its worker must next report (0015). */
  leaseExpiresAt: text("lease_expires_at"),
  createdBy: text("created_by"),
  ...timestamps(),
  processedAt: text("processed_at"),
  deletedAt: text("deleted_at"),
});

export type DocumentRow = typeof documents.$inferSelect;

export const chunks = sqliteTable("chunks", {
  seq: integer("seq").primaryKey(),
  id: text("id").notNull().unique(),
  documentId: text("document_id").notNull(),
  knowledgeBaseId: text("knowledge_base_id").notNull(),
  tenantId: text("tenant_id").notNull(),
  generation: integer("generation").notNull(),
  ordinal: integer("ordinal").notNull(),
  title: text("title").notNull(),
  heading: text("heading").notNull().default(""),
  body: text("body").notNull(),
  page: integer("page"),
  tokenCount: integer("token_count").notNull(),
  embedded: integer("embedded", { mode: "boolean" }).notNull().default(false),
  createdAt: createdAt(),
});

export type ChunkRow = typeof chunks.$inferSelect;

export const ingestGarbage = sqliteTable("ingest_garbage", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  kind: text("kind", { enum: ["object", "vector"] }).notNull(),
  knowledgeBaseId: text("knowledge_base_id").notNull(),
  ref: text("ref").notNull(),
  /** A stored file's tenant and the bytes it counts for until it is removed (0015). */
  tenantId: text("tenant_id"),
  bytes: integer("bytes").notNull().default(0),
  createdAt: createdAt(),
});

/** What a deletion leaves to remove beyond files and vectors (migrations/0015; drained by the supervisor). */
export const cleanupTasks = sqliteTable("cleanup_tasks", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  kind: text("kind", { enum: ["document", "knowledge_base"] }).notNull(),
  ref: text("ref").notNull(),
  knowledgeBaseId: text("knowledge_base_id").notNull(),
  attempts: integer("attempts").notNull().default(0),
  createdAt: createdAt(),
});

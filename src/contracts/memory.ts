import type { MemoryKind } from "../db/schema";

/** A memory as stored (the `memories` table's columns, as raw SQL reads them). */
export interface MemoryRow {
  seq: number;
  id: string;
  organization_id: string;
  tenant_id: string;
  knowledge_base_id: string | null;
  subject_id: string;
  scope_key: string;
  kind: MemoryKind;
  content: string;
  dedupe_key: string;
  entities: string;
  embedding: string | null;
  embedding_model: string | null;
  source_chat_id: string | null;
  source_message_id: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * What a memory recall reads of a space (src/services/memory/recall.ts `recallReads`): the lexical leg's FTS5
 * candidates and the space's size, and the vector leg's stored rows of the configured embedding model.
 */
export interface RecallReads {
  lexical: { rows: MemoryRow[]; total: number };
  /** The space's memories embedded with `model` (the configured embedder's), newest first. */
  vector: { model: string; rows: MemoryRow[] };
}

/** A memory recall's reads of the space `scopeKey`, for `query`, made ahead of its turn (src/services/chats/recall-ahead.ts). */
export interface RecalledAhead {
  scopeKey: string;
  query: string;
  reads: RecallReads;
}

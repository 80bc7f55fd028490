-- A knowledge base's index version: raised in the same statement batch that makes a document's new vectors
-- searchable (the swap) or takes a document out of search (delete). An isolate that keeps a copy of a small
-- knowledge base's vectors (src/services/vector-index/isolate-copies.ts) uses it only while the version it was
-- copied at is the one a request reads.
ALTER TABLE knowledge_bases ADD COLUMN index_version INTEGER NOT NULL DEFAULT 0;

-- Documents, their indexed chunks (with an FTS5 index) and the garbage list that
-- drives cleanup outside D1 (stored files in R2, vectors in the vector index).

CREATE TABLE documents (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL,
  environment_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  -- Set on a derived text companion (the extracted text of a PDF, DOCX, XLSX or PPTX).
  parent_document_id TEXT REFERENCES documents(id) ON DELETE CASCADE,
  filename TEXT NOT NULL,
  mime_type TEXT NOT NULL,
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  status TEXT NOT NULL CHECK (status IN ('pending_upload', 'queued', 'processing', 'processed', 'failed', 'deleted')),
  error TEXT,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  page_count INTEGER,
  source_url TEXT,
  s3_key TEXT NOT NULL,
  -- Bumped every time the document is queued (upload, reprocess). A processing
  -- attempt writes its chunks under generation = ingest_seq; messages carrying
  -- an older seq are stale and ignored.
  ingest_seq INTEGER NOT NULL DEFAULT 0,
  -- The generation search reads. Flipped in one statement when an attempt
  -- completes, so search never sees a half-indexed document.
  index_generation INTEGER NOT NULL DEFAULT 0,
  -- Processing attempts for the current ingest_seq (reset when queued again).
  attempts INTEGER NOT NULL DEFAULT 0,
  upload_expires_at TEXT,
  -- Set while a Worker-signed upload streams into R2, so a second upload gets 409.
  upload_claimed_at TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  processed_at TEXT,
  deleted_at TEXT
);
CREATE INDEX documents_kb_idx ON documents (knowledge_base_id, created_at);
CREATE INDEX documents_tenant_idx ON documents (tenant_id);
CREATE INDEX documents_status_idx ON documents (status, updated_at);
CREATE UNIQUE INDEX documents_s3_key_idx ON documents (s3_key);
-- One derived text companion per source document.
CREATE UNIQUE INDEX documents_parent_idx ON documents (parent_document_id) WHERE parent_document_id IS NOT NULL;

-- Tenant counters follow the rows exactly. A document counts (and its declared
-- size is reserved) from presign until it is deleted. Derived text companions
-- are the service's own by-product and count toward neither.
CREATE TRIGGER documents_counters_insert AFTER INSERT ON documents
WHEN NEW.parent_document_id IS NULL AND NEW.status <> 'deleted' BEGIN
  UPDATE tenants SET document_count = document_count + 1, storage_used_bytes = storage_used_bytes + NEW.size_bytes
  WHERE id = NEW.tenant_id;
END;
CREATE TRIGGER documents_counters_soft_delete AFTER UPDATE OF status ON documents
WHEN NEW.parent_document_id IS NULL AND OLD.status <> 'deleted' AND NEW.status = 'deleted' BEGIN
  UPDATE tenants SET document_count = document_count - 1, storage_used_bytes = storage_used_bytes - OLD.size_bytes
  WHERE id = NEW.tenant_id;
END;
CREATE TRIGGER documents_counters_size AFTER UPDATE OF size_bytes ON documents
WHEN NEW.parent_document_id IS NULL AND OLD.status <> 'deleted' AND NEW.status <> 'deleted' BEGIN
  UPDATE tenants SET storage_used_bytes = storage_used_bytes - OLD.size_bytes + NEW.size_bytes WHERE id = NEW.tenant_id;
END;
CREATE TRIGGER documents_counters_delete AFTER DELETE ON documents
WHEN OLD.parent_document_id IS NULL AND OLD.status <> 'deleted' BEGIN
  UPDATE tenants SET document_count = document_count - 1, storage_used_bytes = storage_used_bytes - OLD.size_bytes
  WHERE id = OLD.tenant_id;
END;

-- Work left outside D1 when rows go: stored files ('object', ref = R2 key) and
-- vectors ('vector', ref = chunk id). Filled by triggers, so every path that
-- removes rows (document delete, reprocess, knowledge base / tenant /
-- organization cascades) leaves a record; drained by the ingest queue and the
-- cron housekeeping. No foreign keys: it must outlive the rows it describes.
CREATE TABLE ingest_garbage (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('object', 'vector')),
  knowledge_base_id TEXT NOT NULL,
  ref TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX ingest_garbage_kb_idx ON ingest_garbage (knowledge_base_id, kind);

CREATE TRIGGER documents_garbage_soft_delete AFTER UPDATE OF status ON documents
WHEN OLD.status <> 'deleted' AND NEW.status = 'deleted' BEGIN
  INSERT INTO ingest_garbage (kind, knowledge_base_id, ref) VALUES ('object', NEW.knowledge_base_id, NEW.s3_key);
END;
CREATE TRIGGER documents_garbage_delete AFTER DELETE ON documents
WHEN OLD.status <> 'deleted' BEGIN
  INSERT INTO ingest_garbage (kind, knowledge_base_id, ref) VALUES ('object', OLD.knowledge_base_id, OLD.s3_key);
END;

-- Indexed passages. `seq` is the integer rowid the FTS index refers to; `id`
-- ("<document id>:<generation>:<ordinal>") is deterministic so that a
-- redelivered or concurrent attempt of the same generation writes nothing twice.
CREATE TABLE chunks (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL,
  generation INTEGER NOT NULL,
  ordinal INTEGER NOT NULL,
  -- FTS columns: the document's title (filename or page title), the heading
  -- path ("Chapter > Section"), and the passage text.
  title TEXT NOT NULL,
  heading TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL,
  page INTEGER,
  token_count INTEGER NOT NULL,
  -- 1 once the chunk's vector is in the vector index (a retried attempt embeds only the rest).
  embedded INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX chunks_document_idx ON chunks (document_id, generation, ordinal);
CREATE INDEX chunks_kb_idx ON chunks (knowledge_base_id);

-- Full-text index over chunks (external content), kept in step by triggers.
-- Query it only with terms the service has tokenized and quoted itself.
-- `knowledge_base_id` is indexed too, so a query restricts itself to one
-- knowledge base inside MATCH (`knowledge_base_id : "kb_..." AND (...)`) and
-- FTS5 can rank and LIMIT without looking at other tenants' rows; give it
-- weight 0 in bm25() (services/retrieval/search.ts).
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  title, heading, body, knowledge_base_id,
  content='chunks', content_rowid='seq',
  tokenize='porter unicode61'
);
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts (rowid, title, heading, body, knowledge_base_id)
  VALUES (NEW.seq, NEW.title, NEW.heading, NEW.body, NEW.knowledge_base_id);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, body, knowledge_base_id)
  VALUES ('delete', OLD.seq, OLD.title, OLD.heading, OLD.body, OLD.knowledge_base_id);
  INSERT INTO ingest_garbage (kind, knowledge_base_id, ref) VALUES ('vector', OLD.knowledge_base_id, OLD.id);
END;
CREATE TRIGGER chunks_fts_update AFTER UPDATE OF title, heading, body, knowledge_base_id ON chunks BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, body, knowledge_base_id)
  VALUES ('delete', OLD.seq, OLD.title, OLD.heading, OLD.body, OLD.knowledge_base_id);
  INSERT INTO chunks_fts (rowid, title, heading, body, knowledge_base_id)
  VALUES (NEW.seq, NEW.title, NEW.heading, NEW.body, NEW.knowledge_base_id);
END;

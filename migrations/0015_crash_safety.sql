-- Crash safety (README "Crash safety"). Work in flight holds a LEASE that expires in seconds and is renewed by a
-- heartbeat while the work runs; the supervisor (src/durable/supervisor.ts, a Durable Object alarm) re-drives
-- whatever's lease lapsed: documents are queued again or failed, turns keep their checkpointed answer, runs fail
-- with a reason. Deletions leave a record of what must be removed outside D1 in the same write, and the
-- supervisor removes it.

-- A queued document: until when its processing message may take to arrive (delay included); a processing one:
-- until when its worker must next report. NULL on rows written before this migration (updated_at then counts).
ALTER TABLE documents ADD COLUMN lease_expires_at TEXT;
CREATE INDEX documents_lease_idx ON documents (lease_expires_at) WHERE status IN ('queued', 'processing');

-- A queued or running agent run: renewed by its turn's heartbeat.
ALTER TABLE agent_runs ADD COLUMN lease_expires_at TEXT;
CREATE INDEX agent_runs_lease_idx ON agent_runs (lease_expires_at) WHERE status IN ('queued', 'running');

-- The chat's turn in flight (one per chat): the id its answer is saved under, and its lease.
ALTER TABLE chats ADD COLUMN turn_message_id TEXT;
ALTER TABLE chats ADD COLUMN turn_lease_expires_at TEXT;
CREATE INDEX chats_turn_lease_idx ON chats (turn_lease_expires_at) WHERE turn_lease_expires_at IS NOT NULL;

-- Storage stays counted until the file is really gone: a stored file on the garbage list carries its tenant and
-- the bytes it counts for, and draining it releases them (src/services/documents/cleanup.ts). Rows recorded
-- before this migration carry 0 bytes (their storage was released when they were recorded).
ALTER TABLE ingest_garbage ADD COLUMN tenant_id TEXT;
ALTER TABLE ingest_garbage ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;

-- (A pending upload has no stored file yet: its reservation is released at once, as before.)
DROP TRIGGER documents_counters_soft_delete;
CREATE TRIGGER documents_counters_soft_delete AFTER UPDATE OF status ON documents
WHEN NEW.parent_document_id IS NULL AND OLD.status <> 'deleted' AND NEW.status = 'deleted' BEGIN
  UPDATE tenants SET document_count = document_count - 1,
    storage_used_bytes = storage_used_bytes - CASE WHEN OLD.status = 'pending_upload' THEN OLD.size_bytes ELSE 0 END
  WHERE id = NEW.tenant_id;
END;
DROP TRIGGER documents_counters_delete;
CREATE TRIGGER documents_counters_delete AFTER DELETE ON documents
WHEN OLD.parent_document_id IS NULL AND OLD.status <> 'deleted' BEGIN
  UPDATE tenants SET document_count = document_count - 1,
    storage_used_bytes = storage_used_bytes - CASE WHEN OLD.status = 'pending_upload' THEN OLD.size_bytes ELSE 0 END
  WHERE id = OLD.tenant_id;
END;
DROP TRIGGER documents_garbage_soft_delete;
CREATE TRIGGER documents_garbage_soft_delete AFTER UPDATE OF status ON documents
WHEN OLD.status <> 'deleted' AND NEW.status = 'deleted' BEGIN
  INSERT INTO ingest_garbage (kind, knowledge_base_id, ref, tenant_id, bytes)
  VALUES ('object', NEW.knowledge_base_id, NEW.s3_key, NEW.tenant_id,
    CASE WHEN NEW.parent_document_id IS NULL AND OLD.status <> 'pending_upload' THEN OLD.size_bytes ELSE 0 END);
END;
DROP TRIGGER documents_garbage_delete;
CREATE TRIGGER documents_garbage_delete AFTER DELETE ON documents
WHEN OLD.status <> 'deleted' BEGIN
  INSERT INTO ingest_garbage (kind, knowledge_base_id, ref, tenant_id, bytes)
  VALUES ('object', OLD.knowledge_base_id, OLD.s3_key, OLD.tenant_id,
    CASE WHEN OLD.parent_document_id IS NULL AND OLD.status <> 'pending_upload' THEN OLD.size_bytes ELSE 0 END);
END;

-- Work a deletion leaves beyond single files and vectors, recorded by trigger in the deleting statement itself:
-- a deleted document's chunks (whose vectors then go on the garbage list) and tables; a removed knowledge base's
-- vector index and tables. No foreign keys: a task outlives the rows it describes.
CREATE TABLE cleanup_tasks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('document', 'knowledge_base')),
  ref TEXT NOT NULL,
  knowledge_base_id TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX cleanup_tasks_ref_idx ON cleanup_tasks (ref);

CREATE TRIGGER documents_cleanup_task AFTER UPDATE OF status ON documents
WHEN OLD.status <> 'deleted' AND NEW.status = 'deleted' AND NEW.parent_document_id IS NULL BEGIN
  INSERT INTO cleanup_tasks (kind, ref, knowledge_base_id) VALUES ('document', NEW.id, NEW.knowledge_base_id);
END;
CREATE TRIGGER knowledge_bases_cleanup_task AFTER DELETE ON knowledge_bases BEGIN
  INSERT INTO cleanup_tasks (kind, ref, knowledge_base_id) VALUES ('knowledge_base', OLD.id, OLD.id);
END;

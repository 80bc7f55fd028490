-- Memory: tenant settings, memories of end users (durable, or kept under one
-- knowledge base), their full-text index, and the entity graph built from them.
-- Everything hangs off the organization / tenant / knowledge base / chat it
-- belongs to with ON DELETE CASCADE, so deleting any of them removes what it
-- owns; a memory whose source chat is deleted goes with it.

-- Absent row = the defaults (mode disabled, retention explicit_only).
CREATE TABLE tenant_memory_settings (
  tenant_id TEXT PRIMARY KEY NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  mode TEXT NOT NULL DEFAULT 'disabled' CHECK (mode IN ('disabled', 'durable')),
  retention TEXT NOT NULL DEFAULT 'explicit_only' CHECK (retention IN ('none', 'explicit_only', 'automatic')),
  updated_at TEXT NOT NULL
);

-- `scope_key` names one memory space: tenant + subject (+ knowledge base for
-- kb_restricted memories), hashed into one FTS token so a full-text query
-- restricts itself to that space inside MATCH. `dedupe_key` is what the memory
-- is about ("my project code"): a restatement with the same key updates the row.
CREATE TABLE memories (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  knowledge_base_id TEXT REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  subject_id TEXT NOT NULL,
  scope_key TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'instruction')),
  content TEXT NOT NULL,
  dedupe_key TEXT NOT NULL,
  entities TEXT NOT NULL DEFAULT '[]',          -- JSON array of entity names
  embedding TEXT,                               -- JSON array of floats
  embedding_model TEXT,
  source_chat_id TEXT REFERENCES chats(id) ON DELETE CASCADE,
  source_message_id TEXT REFERENCES messages(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX memories_scope_idx ON memories (scope_key, dedupe_key);
CREATE INDEX memories_tenant_idx ON memories (tenant_id, knowledge_base_id, created_at);
CREATE INDEX memories_chat_idx ON memories (source_chat_id);

CREATE VIRTUAL TABLE memories_fts USING fts5(
  content, scope_key,
  content='memories', content_rowid='seq',
  tokenize='porter unicode61'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, content, scope_key) VALUES (NEW.seq, NEW.content, NEW.scope_key);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, content, scope_key) VALUES ('delete', OLD.seq, OLD.content, OLD.scope_key);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, scope_key ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, content, scope_key) VALUES ('delete', OLD.seq, OLD.content, OLD.scope_key);
  INSERT INTO memories_fts (rowid, content, scope_key) VALUES (NEW.seq, NEW.content, NEW.scope_key);
END;

-- Graph nodes: one per entity name within a memory space.
CREATE TABLE memory_entities (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  knowledge_base_id TEXT REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  scope_key TEXT NOT NULL,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  type TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (scope_key, name_key)
);

-- Which memories mention which entity (memory_count).
CREATE TABLE memory_entity_links (
  memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  entity_id TEXT NOT NULL REFERENCES memory_entities(id) ON DELETE CASCADE,
  PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX memory_entity_links_entity_idx ON memory_entity_links (entity_id);

-- Graph edges, each from the memory that states it.
CREATE TABLE memory_relations (
  id TEXT PRIMARY KEY NOT NULL,
  memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  source_entity_id TEXT NOT NULL REFERENCES memory_entities(id) ON DELETE CASCADE,
  target_entity_id TEXT NOT NULL REFERENCES memory_entities(id) ON DELETE CASCADE,
  relation TEXT NOT NULL
);
CREATE INDEX memory_relations_memory_idx ON memory_relations (memory_id);

-- A node left without memories goes, whichever path removed its last link
-- (one memory deleted, a restatement, a chat / knowledge base cascade).
CREATE TRIGGER memory_entity_links_orphan AFTER DELETE ON memory_entity_links BEGIN
  DELETE FROM memory_entities WHERE id = OLD.entity_id
    AND NOT EXISTS (SELECT 1 FROM memory_entity_links WHERE entity_id = OLD.entity_id);
END;

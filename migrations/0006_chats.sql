-- Chats and messages. A chat belongs to a tenant and a knowledge base; its
-- owner is the signed-in user who created it, or (API-key chats) the
-- application plus an optional external end user (external_subject_id).
CREATE TABLE chats (
  id TEXT PRIMARY KEY NOT NULL,                -- client-generated UUID
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  title TEXT,
  access_level TEXT NOT NULL DEFAULT 'private' CHECK (access_level IN ('private', 'org', 'public')),
  owner_user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  created_by_api_key_id TEXT,
  external_subject_id TEXT,
  agent_mode TEXT NOT NULL DEFAULT 'deep' CHECK (agent_mode IN ('quick', 'deep')),
  is_query INTEGER NOT NULL DEFAULT 0,
  shared_source_chat_id TEXT,
  settings TEXT NOT NULL DEFAULT '{}',         -- JSON: websearch_enable, skill_ids, connector_slugs, ...
  todo TEXT,                                   -- JSON {items, updated_at} or NULL
  summary TEXT,                                -- rolling summary of turns older than summary_through_seq
  summary_through_seq INTEGER NOT NULL DEFAULT 0,
  terminated_at TEXT,
  termination_reason TEXT,
  message_count INTEGER NOT NULL DEFAULT 0,
  last_message_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX chats_tenant_idx ON chats (tenant_id, knowledge_base_id, created_at);
CREATE INDEX chats_owner_idx ON chats (owner_user_id, tenant_id, created_at);
CREATE INDEX chats_subject_idx ON chats (tenant_id, external_subject_id, created_at);

CREATE TABLE messages (
  id TEXT PRIMARY KEY NOT NULL,
  chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,                        -- order within the chat
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  content TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'partial', 'error')),
  metadata TEXT NOT NULL DEFAULT '{}',         -- JSON: sources, usage, model, memoryUsed, ...
  created_at TEXT NOT NULL,
  UNIQUE (chat_id, seq)
);

CREATE TRIGGER messages_count_insert AFTER INSERT ON messages BEGIN
  UPDATE chats SET message_count = message_count + 1, last_message_at = NEW.created_at WHERE id = NEW.chat_id;
END;
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages BEGIN
  UPDATE chats SET message_count = message_count - 1 WHERE id = OLD.chat_id;
END;

-- Files stored for chats (images of messages). Deleting a chat -- directly or by
-- the cascade from its knowledge base, tenant or organization -- records each
-- file on the garbage list (migrations/0003), whose drain deletes it from R2.
CREATE TABLE chat_files (
  key TEXT PRIMARY KEY NOT NULL,
  chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
  knowledge_base_id TEXT NOT NULL,
  media_type TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX chat_files_chat_idx ON chat_files (chat_id);

CREATE TRIGGER chat_files_garbage AFTER DELETE ON chat_files BEGIN
  INSERT INTO ingest_garbage (kind, knowledge_base_id, ref) VALUES ('object', OLD.knowledge_base_id, OLD.key);
END;

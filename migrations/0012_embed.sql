-- Embed tokens (API-DECISIONS "Wave 2 -> Embedding the chat in customers' sites"):
-- short-lived bearer credentials `kbe_...` that a customer's backend mints for a
-- web page. Only a SHA-256 hash of the token is stored. A token is bound to one
-- tenant and knowledge base, an optional end-user subject, a list of origins,
-- a lifetime, and the identity that minted it (an API key or a user): deleting
-- the key, the user, the knowledge base, the tenant or the organization deletes
-- its tokens; revoking the key or removing the user's membership makes them fail
-- at once (checked on every request).
CREATE TABLE embed_tokens (
  id TEXT PRIMARY KEY NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  external_subject_id TEXT,
  allowed_origins TEXT NOT NULL,
  created_by_api_key_id TEXT REFERENCES api_keys(id) ON DELETE CASCADE,
  created_by_user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  CHECK ((created_by_api_key_id IS NULL) <> (created_by_user_id IS NULL))
);
CREATE INDEX embed_tokens_expires_idx ON embed_tokens (expires_at);

-- Wave 3, access at every door (API-DECISIONS "Access is one rule, whatever the door").

-- Chat images count toward the tenant's storage (and its quota) while they exist.
ALTER TABLE chat_files ADD COLUMN tenant_id TEXT;
ALTER TABLE chat_files ADD COLUMN size_bytes INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER chat_files_storage_in AFTER INSERT ON chat_files WHEN NEW.tenant_id IS NOT NULL BEGIN
  UPDATE tenants SET storage_used_bytes = storage_used_bytes + NEW.size_bytes WHERE id = NEW.tenant_id;
END;

CREATE TRIGGER chat_files_storage_out AFTER DELETE ON chat_files WHEN OLD.tenant_id IS NOT NULL BEGIN
  UPDATE tenants SET storage_used_bytes = MAX(0, storage_used_bytes - OLD.size_bytes) WHERE id = OLD.tenant_id;
END;

-- Final redirects after a connect are allow-listed per environment (JSON array of https origins).
ALTER TABLE environments ADD COLUMN allowed_redirect_origins TEXT NOT NULL DEFAULT '[]';

-- OAuth flows (connectors, MCP servers) bound to the browser that opened them: the flow URL on our
-- own origin sets a cookie whose hash is kept here; the callback completes only with that cookie.
CREATE TABLE oauth_browser_flows (
  id TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL,
  state_hash TEXT NOT NULL,
  authorize_url TEXT NOT NULL,
  browser_hash TEXT,
  user_id TEXT,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX oauth_browser_flows_state_idx ON oauth_browser_flows (state_hash);
CREATE INDEX oauth_browser_flows_expiry_idx ON oauth_browser_flows (expires_at);

-- MCP tool servers registered by an organization (API-DECISIONS "Wave 2 -> MCP servers").
-- Secrets (static credentials, OAuth client information, tokens, the PKCE verifier) are
-- sealed with src/lib/secrets.ts (AAD = mcp_server:<id>) and never returned.
CREATE TABLE mcp_servers (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  auth TEXT NOT NULL DEFAULT 'none' CHECK (auth IN ('none', 'credentials', 'oauth')),
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'ready', 'needs_auth', 'error')),
  last_error TEXT,
  transport TEXT,                              -- 'streamable_http' | 'sse' once discovery has connected
  tool_count INTEGER NOT NULL DEFAULT 0,
  manifest TEXT NOT NULL DEFAULT '[]',         -- JSON [{name, description, input_schema}]
  manifest_refreshed_at TEXT,
  credentials_enc TEXT,                        -- sealed static credentials (sent as Authorization: Bearer)
  oauth_client_enc TEXT,                       -- sealed client information from dynamic registration
  oauth_discovery TEXT,                        -- JSON: protected-resource and authorization-server metadata (public documents)
  oauth_resource_metadata_url TEXT,            -- from the server's WWW-Authenticate challenge
  oauth_tokens_enc TEXT,                       -- sealed tokens {access_token, refresh_token, ...}
  oauth_token_expires_at INTEGER,              -- epoch ms; refreshed a minute before
  oauth_token_version INTEGER NOT NULL DEFAULT 0,
  oauth_state_nonce TEXT,                      -- the pending authorization's state nonce (single use)
  oauth_verifier_enc TEXT,                     -- sealed PKCE verifier of the pending authorization
  oauth_scope TEXT,
  refresh_lease_until INTEGER,                 -- epoch ms: one token refresh at a time per registration
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX mcp_servers_org_idx ON mcp_servers (organization_id, created_at);

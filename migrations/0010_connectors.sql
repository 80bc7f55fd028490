-- Connectors (API-DECISIONS "Wave 2 -> Connectors"): third-party apps connected per end user with OAuth.
-- A connection belongs to ONE owner: a signed-in user (owner_key 'user:<user id>') or an API-served end user
-- of a tenant (owner_key 'ext:<tenant id>:<external_subject_id>'). Tokens are sealed with src/lib/secrets.ts
-- (AAD 'connector_connection:<id>'); nothing secret is stored in the clear.
CREATE TABLE connector_connections (
  id TEXT PRIMARY KEY NOT NULL,
  owner_key TEXT NOT NULL,
  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  organization_id TEXT REFERENCES organizations(id) ON DELETE CASCADE,
  tenant_id TEXT REFERENCES tenants(id) ON DELETE CASCADE,
  external_subject_id TEXT,
  slug TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'connected' CHECK (status IN ('connected', 'disconnected')),
  reason TEXT CHECK (reason IS NULL OR reason IN ('expired', 'revoked', 'scope_missing')),
  account TEXT,                       -- login or e-mail at the provider, shown in status
  account_id TEXT,                    -- the provider's id of that account
  access_token TEXT NOT NULL,         -- sealed
  refresh_token TEXT,                 -- sealed
  token_expires_at TEXT,              -- null: the provider's token does not expire
  scopes TEXT,
  extra TEXT NOT NULL DEFAULT '{}',   -- non-secret provider facts (Jira cloud id and site, Slack team URL, ...)
  refresh_lock_until TEXT,            -- one refresh at a time per connection
  connected_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((user_id IS NOT NULL AND tenant_id IS NULL) OR (user_id IS NULL AND tenant_id IS NOT NULL AND external_subject_id IS NOT NULL)),
  UNIQUE (owner_key, slug)
);
CREATE INDEX connector_connections_tenant_idx ON connector_connections (tenant_id, external_subject_id);

-- Pending authorizations: one row per signed state (single use: the callback deletes it).
CREATE TABLE connector_oauth_states (
  id TEXT PRIMARY KEY NOT NULL,
  owner_key TEXT NOT NULL,
  slug TEXT NOT NULL,
  code_verifier TEXT,                 -- sealed (AAD 'connector_oauth_state:<id>'); null without PKCE
  redirect_url TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX connector_oauth_states_expiry_idx ON connector_oauth_states (expires_at);

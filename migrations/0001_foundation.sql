-- Foundation: identity, organizations, environments, tenants, API keys.
-- Timestamps are ISO 8601 UTC text. Credits are integer micro-credits.
-- Later migrations hang their tables off tenants/organizations with ON DELETE
-- CASCADE so that deleting an organization or tenant removes everything beneath.

CREATE TABLE users (
  id TEXT PRIMARY KEY NOT NULL,
  email TEXT NOT NULL UNIQUE,               -- stored lower-cased
  name TEXT,
  password_hash TEXT NOT NULL,
  password_salt TEXT NOT NULL,
  password_iterations INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE sessions (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,          -- SHA-256 of the cookie value; the token itself is never stored
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  user_agent TEXT,
  ip TEXT
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

-- Failed logins (per email) and signups (per client address), for throttling.
CREATE TABLE auth_throttle (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('login_failure', 'signup')),
  subject TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX auth_throttle_lookup_idx ON auth_throttle (kind, subject, created_at);

CREATE TABLE organizations (
  id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL,
  slug TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL DEFAULT 'business' CHECK (type IN ('business', 'personal')),
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive', 'suspended')),
  -- Micro-credits added to the organization's pool.
  credits_total INTEGER NOT NULL DEFAULT 0,
  -- Used micro-credits of deleted tenants: they stay allocated and used.
  credits_retired INTEGER NOT NULL DEFAULT 0,
  created_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE organization_members (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'billing_admin', 'developer', 'viewer')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organization_id, user_id)
);
CREATE INDEX organization_members_user_idx ON organization_members (user_id);

-- 'expired' is derived (pending and past expires_at); the cron also marks it.
CREATE TABLE invitations (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('billing_admin', 'developer', 'viewer')),
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked', 'expired')),
  invited_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  accepted_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX invitations_org_idx ON invitations (organization_id, status);
CREATE INDEX invitations_email_idx ON invitations (email, status);

CREATE TABLE environments (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  is_default INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organization_id, name)
);

CREATE TABLE tenants (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  external_id TEXT,
  external_name TEXT,
  credits_pool INTEGER NOT NULL DEFAULT 0 CHECK (credits_pool >= 0),
  credits_used INTEGER NOT NULL DEFAULT 0,
  max_knowledge_bases INTEGER NOT NULL DEFAULT 100,
  max_documents INTEGER NOT NULL DEFAULT 10000,
  max_storage_gb REAL NOT NULL DEFAULT 10,
  -- Usage counters, kept exact by triggers on the tables that own the rows
  -- (knowledge bases, documents), so quota checks are single statements.
  knowledge_base_count INTEGER NOT NULL DEFAULT 0,
  document_count INTEGER NOT NULL DEFAULT 0,
  storage_used_bytes INTEGER NOT NULL DEFAULT 0,
  metadata TEXT NOT NULL DEFAULT '{}',
  is_default INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX tenants_org_idx ON tenants (organization_id);
CREATE INDEX tenants_env_idx ON tenants (environment_id);
CREATE UNIQUE INDEX tenants_env_external_idx ON tenants (environment_id, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,                     -- first characters of the key, shown in lists
  key_hash TEXT NOT NULL UNIQUE,            -- SHA-256 of the whole key; the key itself is never stored
  scopes TEXT NOT NULL,                     -- JSON array of scope strings
  tenant_ids TEXT NOT NULL DEFAULT '[]',    -- JSON array; empty = every tenant of the environment
  knowledge_base_id TEXT,                   -- optional restriction to one knowledge base
  expires_at TEXT,
  revoked_at TEXT,
  last_used_at TEXT,
  created_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX api_keys_env_idx ON api_keys (environment_id, revoked_at);
CREATE INDEX api_keys_org_idx ON api_keys (organization_id);

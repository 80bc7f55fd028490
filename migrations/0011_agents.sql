-- Agents: versioned configurations over one knowledge base, their runs, and
-- their schedules (API-DECISIONS "Wave 2 -> Agents").
--
-- knowledge_base_id has no foreign key on purpose: deleting a knowledge base
-- ARCHIVES its agents (runs kept for audit) instead of removing them. The
-- tenant owns the agent; deleting the tenant removes it.
CREATE TABLE agents (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  knowledge_base_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  agent_version INTEGER NOT NULL DEFAULT 1,
  -- The current version's configuration (the same JSON as agent_versions.config).
  config TEXT NOT NULL,
  -- Schedule state (switched without a new version).
  schedule_cron TEXT,
  schedule_timezone TEXT,
  schedule_message TEXT,
  schedule_enabled INTEGER NOT NULL DEFAULT 0,
  -- The identity bound when the schedule was last set: a user or an API key.
  schedule_user_id TEXT,
  schedule_api_key_id TEXT,
  -- The occurrence the agent's Durable Object alarm is armed for (ISO, UTC).
  next_run_at TEXT,
  created_by TEXT,
  archived_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX agents_tenant ON agents (tenant_id, created_at);
CREATE INDEX agents_kb ON agents (knowledge_base_id);
CREATE INDEX agents_schedule ON agents (schedule_enabled, next_run_at);

-- Immutable snapshots: one row per published version.
CREATE TABLE agent_versions (
  agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  config TEXT NOT NULL,
  created_by TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (agent_id, version)
);

-- Runs. A scheduled occurrence is (agent_id, scheduled_for), UNIQUE: a retried
-- or duplicated trigger finds the same row and never runs it twice (NULLs, i.e.
-- on-demand runs, are distinct in SQLite).
CREATE TABLE agent_runs (
  id TEXT PRIMARY KEY NOT NULL,
  agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  organization_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  agent_version INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  trigger TEXT NOT NULL CHECK (trigger IN ('api', 'schedule', 'delegation')),
  scheduled_for TEXT,
  chat_id TEXT,
  -- Whose run it is (like its chat): 'user:<id>' or 'app' (API keys); NULL for a run refused before any work.
  owner TEXT,
  parent_run_id TEXT,
  error_code TEXT,
  error_message TEXT,
  usage TEXT,
  snapshot TEXT,
  output TEXT,
  message_id TEXT,
  started_at TEXT,
  ended_at TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (agent_id, scheduled_for)
);
CREATE INDEX agent_runs_agent ON agent_runs (agent_id, created_at);
CREATE INDEX agent_runs_chat ON agent_runs (chat_id);

-- Usage logs: one row per metered model call, written in the same transaction
-- as the charge to the tenant (src/services/billing/metering.ts).
-- tenant_id has no foreign key on purpose: logs outlive a deleted tenant, so the
-- organization's usage still adds up to its used credits (credits_retired).
CREATE TABLE usage_logs (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN
    ('chat', 'fast_query', 'improve_prompt', 'follow_up', 'summary', 'agent_run', 'embedding', 'memory')),
  model TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens INTEGER NOT NULL DEFAULT 0,
  credits_used INTEGER NOT NULL DEFAULT 0,     -- micro-credits
  chat_id TEXT,
  message_id TEXT,
  agent_run_id TEXT,
  api_key_id TEXT,
  is_api_key INTEGER NOT NULL DEFAULT 0,
  user_id TEXT,
  -- Optional caller-supplied key that makes a charge idempotent (a retried
  -- queue message or request never charges twice).
  idempotency_key TEXT UNIQUE,
  created_at TEXT NOT NULL
);
CREATE INDEX usage_logs_tenant_idx ON usage_logs (tenant_id, created_at);
CREATE INDEX usage_logs_org_idx ON usage_logs (organization_id, created_at);
CREATE INDEX usage_logs_key_idx ON usage_logs (api_key_id, created_at);

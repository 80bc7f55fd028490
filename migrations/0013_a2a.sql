-- External (A2A) agents registered under a knowledge base (API-DECISIONS
-- "Wave 2 -> External (A2A) agents"). `headers_enc` and `metadata_enc` are
-- AES-GCM envelopes (src/lib/secrets.ts, AAD `a2a_agent:<id>`); the fetched,
-- validated agent card is kept as JSON (it is public). Deleting the knowledge
-- base removes its registrations.
CREATE TABLE a2a_agents (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  card_url TEXT NOT NULL,
  description TEXT,
  headers_enc TEXT,
  metadata_enc TEXT,
  card TEXT,
  status TEXT NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'error')),
  last_error TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX a2a_agents_kb ON a2a_agents (knowledge_base_id, created_at);

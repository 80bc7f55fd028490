-- Knowledge bases: owned by a tenant; documents, chats and artifacts hang off them.
CREATE TABLE knowledge_bases (
  id TEXT PRIMARY KEY NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  kb_memory_mode TEXT NOT NULL DEFAULT 'disabled' CHECK (kb_memory_mode IN ('disabled', 'subject', 'kb_restricted')),
  inbound_delegation_enabled INTEGER NOT NULL DEFAULT 0,
  persona TEXT,
  instructions TEXT,
  custom_prompt TEXT,
  main_custom_prompt TEXT,
  sql_custom_prompt TEXT,
  sql_agent_instructions TEXT,
  sql_answering_instructions TEXT,
  chart_instructions TEXT,
  -- The embedding model and dimension this knowledge base's vectors were made
  -- with; set when the first document is indexed, so vectors are never mixed.
  embedding_model TEXT,
  embedding_dimensions INTEGER,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX knowledge_bases_tenant_idx ON knowledge_bases (tenant_id, created_at);
CREATE INDEX knowledge_bases_org_idx ON knowledge_bases (organization_id);

-- The tenant's knowledge_base_count follows the rows exactly.
CREATE TRIGGER knowledge_bases_count_insert AFTER INSERT ON knowledge_bases BEGIN
  UPDATE tenants SET knowledge_base_count = knowledge_base_count + 1 WHERE id = NEW.tenant_id;
END;
CREATE TRIGGER knowledge_bases_count_delete AFTER DELETE ON knowledge_bases BEGIN
  UPDATE tenants SET knowledge_base_count = knowledge_base_count - 1 WHERE id = OLD.tenant_id;
END;

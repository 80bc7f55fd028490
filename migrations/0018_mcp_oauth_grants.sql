-- OAuth grants of the knowledge-base MCP endpoint (README "Connecting Claude or any MCP client by OAuth").
-- The authorization server (@cloudflare/workers-oauth-provider) keeps registered clients, grants and
-- tokens in the OAUTH_KV namespace; this table is the service's own record of each grant a member
-- approved on the consent page: who, for which client, and which tenant and knowledge bases it may
-- read. A token works only while its row exists and its member still belongs to the organization
-- (checked on every request and every refresh); revoking deletes the row first. Deleting the user,
-- the tenant, the environment or the organization deletes its grants.
CREATE TABLE mcp_oauth_grants (
  id TEXT PRIMARY KEY NOT NULL,
  -- The provider's grant id, known once the client redeemed its authorization code.
  provider_grant_id TEXT,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment_id TEXT NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  -- JSON array of knowledge base ids of that tenant.
  knowledge_base_ids TEXT NOT NULL,
  client_id TEXT NOT NULL,
  client_name TEXT NOT NULL,
  redirect_host TEXT NOT NULL,
  -- JSON array of OAuth scopes.
  scopes TEXT NOT NULL,
  created_at TEXT NOT NULL,
  -- When the grant lapses unless refreshed (the authorization code's 10 minutes, then 30 days after each refresh).
  expires_at TEXT NOT NULL
);
CREATE INDEX mcp_oauth_grants_org_idx ON mcp_oauth_grants (organization_id, created_at);
CREATE INDEX mcp_oauth_grants_user_idx ON mcp_oauth_grants (user_id, client_id);
CREATE INDEX mcp_oauth_grants_expires_idx ON mcp_oauth_grants (expires_at);

-- Dynamic client registration of the MCP endpoint's OAuth provider (POST /oauth/register) is open and anonymous:
-- it is throttled per client address like signups (src/services/mcp-oauth/registration-throttle.ts), in the same
-- table, whose kinds are checked. SQLite cannot change a CHECK in place: the table is rebuilt with its rows.
CREATE TABLE auth_throttle_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('login_failure', 'signup', 'oauth_register')),
  subject TEXT NOT NULL,
  created_at TEXT NOT NULL
);
INSERT INTO auth_throttle_new (id, kind, subject, created_at) SELECT id, kind, subject, created_at FROM auth_throttle;
DROP TABLE auth_throttle;
ALTER TABLE auth_throttle_new RENAME TO auth_throttle;
CREATE INDEX auth_throttle_lookup_idx ON auth_throttle (kind, subject, created_at);

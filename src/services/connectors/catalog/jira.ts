import { appPassage, clip, ProviderError, readTool, searchTool, type ConnectorDefinition, type ProviderApi } from "../types";
import { badge } from "./logo";

/**
 * Jira Cloud through Atlassian OAuth 2.0 (3LO) (developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps):
 * authorize at auth.atlassian.com with `audience=api.atlassian.com` and `prompt=consent`, `offline_access` for a
 * (rotating) refresh token, JSON token exchange. The site is found with GET /oauth/token/accessible-resources
 * (its cloud id), the person with GET /me; Jira REST v3 is then reached at /ex/jira/{cloudid}/rest/api/3.
 * Atlassian offers no token revocation endpoint for 3LO apps (users remove access in their account settings).
 */
function adfText(node: any): string {
  if (!node) return "";
  if (typeof node === "string") return node;
  if (node.type === "text") return node.text ?? "";
  const inner = (node.content ?? []).map(adfText).join(node.type === "doc" ? "\n" : "");
  return ["paragraph", "heading", "listItem", "codeBlock", "blockquote"].includes(node.type) ? `${inner}\n` : inner;
}

function site(api: ProviderApi): { cloudId: string; url: string } {
  const cloudId = api.extra.cloud_id as string | undefined;
  if (!cloudId) throw new ProviderError(403, "No Jira site is reachable with this connection", "scope_missing");
  return { cloudId, url: String(api.extra.site_url ?? "") };
}

const jiraPath = (cloudId: string, path: string) => `/ex/jira/${encodeURIComponent(cloudId)}/rest/api/3${path}`;

export const jira: ConnectorDefinition = {
  slug: "jira",
  name: "Jira",
  description: "Search Jira issues with text or JQL, and read an issue with its description and comments.",
  logo: badge("J", "#0052cc"),
  category: "engineering",
  endpoints: {
    authorize_url: "https://auth.atlassian.com/authorize",
    token_url: "https://auth.atlassian.com/oauth/token",
    api_base_url: "https://api.atlassian.com",
  },
  scopes: ["read:jira-work", "read:jira-user", "read:me", "offline_access"],
  scopeParam: "scope",
  scopeSeparator: " ",
  pkce: false,
  authorizeParams: { audience: "api.atlassian.com", prompt: "consent", response_type: "code" },
  tokenAuth: "body",
  tokenEncoding: "json",
  async identify(api) {
    const resources = await api.json<Array<{ id: string; url: string; name: string; scopes: string[] }>>("/oauth/token/accessible-resources");
    const jiraSite = resources.find((r) => r.scopes?.some((s) => s.includes("jira")));
    if (!jiraSite) throw new ProviderError(403, "The account granted no Jira site", "scope_missing");
    const me = await api.json<{ account_id: string; email?: string; name?: string }>("/me");
    return { account: me.email ?? me.name ?? null, accountId: me.account_id, extra: { cloud_id: jiraSite.id, site_url: jiraSite.url, site_name: jiraSite.name } };
  },
  tools: [
    searchTool("Search Jira issues. Plain words search issue text; a JQL expression (e.g. `project = OPS AND status = Open`) is used as is.", 1000, async (query, api) => {
      const { cloudId, url } = site(api);
      const looksJql = /\b(=|~|ORDER BY|AND|OR|in \()/.test(query);
      const jql = looksJql ? query : `text ~ "${query.replace(/["\\]/g, " ")}" ORDER BY updated DESC`;
      const r = await api.json<{ issues: any[] }>(jiraPath(cloudId, "/search/jql"), { query: { jql, maxResults: 10, fields: "summary,status,description,updated" } });
      const passages = r.issues.map((it, i) =>
        appPassage({
          slug: "jira",
          id: it.id,
          title: `${it.key} ${it.fields?.summary ?? ""}`,
          text: `${it.key} ${it.fields?.summary ?? ""} (${it.fields?.status?.name ?? "?"})\n${clip(adfText(it.fields?.description))}`,
          url: url ? `${url}/browse/${it.key}` : null,
          score: 1 / (i + 1),
        }),
      );
      return { text: `${passages.length} issue(s) in Jira.`, passages };
    }),
    readTool("read_issue", "Read a Jira issue by key (e.g. OPS-12) with its description and comments.", "key", 50, async (key, api) => {
      if (!/^[A-Za-z][A-Za-z0-9_]*-\d+$|^\d+$/.test(key)) throw new ProviderError(400, "key must be an issue key such as OPS-12");
      const { cloudId, url } = site(api);
      const it = await api.json<any>(jiraPath(cloudId, `/issue/${encodeURIComponent(key)}`), { query: { fields: "summary,status,description,comment,assignee" } });
      const comments = (it.fields?.comment?.comments ?? []).map((c: any) => `${c.author?.displayName ?? "?"}: ${clip(adfText(c.body), 500)}`);
      const text = [`${it.key} ${it.fields?.summary ?? ""} (${it.fields?.status?.name ?? "?"}, assignee ${it.fields?.assignee?.displayName ?? "none"})`, clip(adfText(it.fields?.description), 3000), ...comments].join("\n\n");
      return { passages: [appPassage({ slug: "jira", id: it.id, title: `${it.key} ${it.fields?.summary ?? ""}`, text, url: url ? `${url}/browse/${it.key}` : null })] };
    }),
  ],
};

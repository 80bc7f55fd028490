import { appPassage, clip, ProviderError, readTool, searchTool, type ConnectorDefinition, type ProviderApi } from "../types";
import { badge } from "./logo";

/**
 * Linear OAuth 2 (linear.app/developers/oauth-2-0-authentication): authorize at linear.app/oauth/authorize with
 * S256 PKCE, token at api.linear.app/oauth/token (refresh tokens for apps that get them), revocation at
 * api.linear.app/oauth/revoke. Everything else is the GraphQL API at api.linear.app/graphql.
 */
async function gql<T>(api: ProviderApi, query: string, variables: Record<string, unknown>): Promise<T> {
  const r = await api.json<{ data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> }>("/graphql", {
    method: "POST",
    body: { query, variables },
  });
  if (r.errors?.length) {
    const code = r.errors[0].extensions?.code;
    throw new ProviderError(code === "AUTHENTICATION_ERROR" ? 401 : 400, `Linear: ${r.errors.map((e) => e.message).join("; ")}`, code);
  }
  if (!r.data) throw new ProviderError(502, "Linear answered no data");
  return r.data;
}

export const linear: ConnectorDefinition = {
  slug: "linear",
  name: "Linear",
  description: "Search issues across your Linear workspace and read an issue with its comments.",
  logo: badge("L", "#5e6ad2"),
  category: "engineering",
  endpoints: {
    authorize_url: "https://linear.app/oauth/authorize",
    token_url: "https://api.linear.app/oauth/token",
    api_base_url: "https://api.linear.app",
  },
  scopes: ["read"],
  scopeParam: "scope",
  scopeSeparator: ",",
  pkce: true,
  authorizeParams: { response_type: "code", prompt: "consent" },
  tokenAuth: "body",
  tokenEncoding: "form",
  async identify(api) {
    const d = await gql<{ viewer: { id: string; name: string; email: string } }>(api, "query { viewer { id name email } }", {});
    return { account: d.viewer.email ?? d.viewer.name, accountId: d.viewer.id };
  },
  async revoke({ endpoints, accessToken, fetch }) {
    const res = await fetch(`${endpoints.api_base_url}/oauth/revoke`, { method: "POST", headers: { Authorization: `Bearer ${accessToken}` } });
    if (!res.ok && res.status !== 400 && res.status !== 401) throw new ProviderError(res.status, `Linear answered ${res.status} to the revocation`);
  },
  tools: [
    searchTool("Search Linear issues by text.", 500, async (term, api) => {
      const d = await gql<{ searchIssues: { nodes: any[] } }>(
        api,
        "query($term: String!) { searchIssues(term: $term, first: 10) { nodes { id identifier title description url state { name } } } }",
        { term },
      );
      const passages = d.searchIssues.nodes.map((n, i) =>
        appPassage({ slug: "linear", id: n.id, title: `${n.identifier} ${n.title}`, text: `${n.identifier} ${n.title} (${n.state?.name ?? "?"})\n${clip(n.description)}`, url: n.url ?? null, score: 1 / (i + 1) }),
      );
      return { text: `${passages.length} issue(s) in Linear.`, passages };
    }),
    readTool("read_issue", "Read a Linear issue with its comments, by id or identifier (e.g. ENG-123).", "id", 100, async (id, api) => {
      const d = await gql<{ issue: any }>(
        api,
        "query($id: String!) { issue(id: $id) { id identifier title description url state { name } assignee { name } comments(first: 20) { nodes { body user { name } } } } }",
        { id },
      );
      const n = d.issue;
      if (!n) throw new ProviderError(404, `No Linear issue ${id}`);
      const comments = (n.comments?.nodes ?? []).map((c: any) => `${c.user?.name ?? "?"}: ${clip(c.body, 500)}`);
      const text = [`${n.identifier} ${n.title} (${n.state?.name ?? "?"}, assignee ${n.assignee?.name ?? "none"})`, clip(n.description, 3000), ...comments].join("\n\n");
      return { passages: [appPassage({ slug: "linear", id: n.id, title: `${n.identifier} ${n.title}`, text, url: n.url ?? null })] };
    }),
  ],
};

import { appPassage, basicAuth, clip, ProviderError, readTool, searchTool, type ConnectorDefinition, type ProviderApi } from "../types";
import { badge } from "./logo";

/**
 * Notion public integrations (developers.notion.com/docs/authorization): authorize with `owner=user`, token
 * exchange with HTTP Basic client credentials and a JSON body; the answer names the workspace and the person
 * who installed it. Revocation: POST /v1/oauth/revoke (Basic auth). API: POST /v1/search, GET /v1/pages/{id},
 * GET /v1/blocks/{id}/children.
 */
const headers = { "Notion-Version": "2022-06-28" };

function titleOf(page: any): string {
  for (const prop of Object.values<any>(page?.properties ?? {})) {
    if (prop?.type === "title") return (prop.title ?? []).map((t: any) => t.plain_text ?? "").join("") || "Untitled";
  }
  return (page?.title ?? []).map?.((t: any) => t.plain_text ?? "").join("") || "Untitled";
}

async function pageText(api: ProviderApi, id: string): Promise<string> {
  const r = await api.json<{ results: any[] }>(`/v1/blocks/${encodeURIComponent(id)}/children`, { headers, query: { page_size: 100 } });
  return r.results
    .map((b) => {
      const body = b?.[b.type];
      const text = (body?.rich_text ?? []).map((t: any) => t.plain_text ?? "").join("");
      if (!text) return "";
      if (b.type.startsWith("heading")) return `## ${text}`;
      if (b.type.endsWith("list_item") || b.type === "to_do") return `- ${text}`;
      return text;
    })
    .filter(Boolean)
    .join("\n");
}

export const notion: ConnectorDefinition = {
  slug: "notion",
  name: "Notion",
  description: "Search the pages shared with the integration and read their content.",
  logo: badge("N", "#000000"),
  category: "knowledge",
  endpoints: {
    authorize_url: "https://api.notion.com/v1/oauth/authorize",
    token_url: "https://api.notion.com/v1/oauth/token",
    api_base_url: "https://api.notion.com",
  },
  // Notion grants the capabilities configured on the integration; it takes no scope parameter.
  scopes: [],
  scopeParam: "scope",
  scopeSeparator: " ",
  pkce: false,
  authorizeParams: { owner: "user", response_type: "code" },
  tokenAuth: "basic",
  tokenEncoding: "json",
  async identify(_api, token) {
    const owner = token.raw.owner as any;
    const person = owner?.user;
    const email = person?.person?.email ?? null;
    return {
      account: email ?? person?.name ?? (token.raw.workspace_name as string) ?? null,
      accountId: person?.id ?? (token.raw.bot_id as string) ?? null,
      extra: { workspace_id: token.raw.workspace_id ?? null, workspace_name: token.raw.workspace_name ?? null, bot_id: token.raw.bot_id ?? null },
    };
  },
  async revoke({ endpoints, client, accessToken, fetch }) {
    const res = await fetch(`${endpoints.api_base_url}/v1/oauth/revoke`, {
      method: "POST",
      headers: { ...headers, Authorization: basicAuth(client), "Content-Type": "application/json" },
      body: JSON.stringify({ token: accessToken }),
    });
    if (!res.ok && res.status !== 400 && res.status !== 401) throw new ProviderError(res.status, `Notion answered ${res.status} to the revocation`);
  },
  tools: [
    searchTool("Search Notion pages by title; returns the matches with an excerpt of the top ones.", 500, async (query, api) => {
      const r = await api.json<{ results: any[] }>("/v1/search", {
        method: "POST",
        headers,
        body: { query, page_size: 10, filter: { property: "object", value: "page" }, sort: { direction: "descending", timestamp: "last_edited_time" } },
      });
      const passages = [];
      for (const [i, page] of r.results.entries()) {
        const title = titleOf(page);
        const content = i < 3 ? await pageText(api, page.id).catch(() => "") : "";
        passages.push(appPassage({ slug: "notion", id: page.id, title, text: content ? `${title}\n${clip(content)}` : title, url: page.url ?? null, score: 1 / (i + 1) }));
      }
      return { text: `${passages.length} page(s) in Notion.`, passages };
    }),
    readTool("read_page", "Read a Notion page's content by page id.", "page_id", 100, async (id, api) => {
      if (!/^[0-9a-fA-F-]{32,36}$/.test(id)) throw new ProviderError(400, "page_id must be a Notion page id (32 hexadecimal digits, dashes allowed)");
      const page = await api.json<any>(`/v1/pages/${encodeURIComponent(id)}`, { headers });
      const title = titleOf(page);
      const content = await pageText(api, id);
      return { passages: [appPassage({ slug: "notion", id: page.id, title, text: `${title}\n${clip(content, 4000)}`, url: page.url ?? null })] };
    }),
  ],
};

import { appPassage, basicAuth, clip, ProviderError, searchTool, stringArg, type ConnectorDefinition } from "../types";
import { badge } from "./logo";

/**
 * GitHub, as an OAuth app (docs.github.com "Authorizing OAuth apps"): web application flow with S256 PKCE
 * (supported since 2025-07), tokens that do not expire, revocation with DELETE /applications/{client_id}/grant
 * (Basic auth with the app's credentials). REST API v3 (`X-GitHub-Api-Version: 2022-11-28`).
 */
const headers = { Accept: "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28" };

export const github: ConnectorDefinition = {
  slug: "github",
  name: "GitHub",
  description: "Search issues and pull requests, and read files and issues in the repositories you can access.",
  logo: badge("GH", "#24292f"),
  category: "engineering",
  endpoints: {
    authorize_url: "https://github.com/login/oauth/authorize",
    token_url: "https://github.com/login/oauth/access_token",
    api_base_url: "https://api.github.com",
  },
  // `repo` is the narrowest scope that can read private repositories; `read:user` for the login.
  scopes: ["repo", "read:user"],
  scopeParam: "scope",
  scopeSeparator: " ",
  pkce: true,
  authorizeParams: { allow_signup: "false" },
  tokenAuth: "body",
  tokenEncoding: "form",
  async identify(api) {
    const me = await api.json<{ login: string; id: number }>("/user", { headers });
    return { account: me.login, accountId: String(me.id) };
  },
  async revoke({ endpoints, client, accessToken, fetch }) {
    const res = await fetch(`${endpoints.api_base_url}/applications/${encodeURIComponent(client.client_id)}/grant`, {
      method: "DELETE",
      headers: { ...headers, Authorization: basicAuth(client), "Content-Type": "application/json" },
      body: JSON.stringify({ access_token: accessToken }),
    });
    if (res.status !== 204 && res.status !== 404 && res.status !== 422) throw new ProviderError(res.status, `GitHub answered ${res.status} to the revocation`);
  },
  tools: [
    searchTool("Search GitHub issues and pull requests (GitHub search syntax works, e.g. `repo:owner/name is:open login bug`).", 256, async (q, api) => {
      const r = await api.json<{ total_count: number; items: any[] }>("/search/issues", { headers, query: { q, per_page: 10 } });
      const passages = r.items.map((it, i) =>
        appPassage({
          slug: "github",
          id: String(it.id),
          title: `${repoOf(it.repository_url)}#${it.number} ${it.title}`,
          text: `${it.pull_request ? "Pull request" : "Issue"} ${repoOf(it.repository_url)}#${it.number} (${it.state}): ${it.title}\n${clip(it.body)}`,
          url: it.html_url ?? null,
          score: 1 / (i + 1),
        }),
      );
      return { text: `${r.total_count} result(s) on GitHub; ${passages.length} shown.`, passages };
    }),
    {
      name: "read_issue",
      description: "Read one issue or pull request with its comments. Input: repo (`owner/name`) and number.",
      inputSchema: {
        type: "object",
        properties: { repo: { type: "string", description: "owner/name" }, number: { type: "integer", minimum: 1 } },
        required: ["repo", "number"],
        additionalProperties: false,
      },
      async execute(input, api) {
        const repo = repoArg(input);
        const n = Number(input.number);
        if (!Number.isInteger(n) || n < 1) throw new ProviderError(400, "number must be a positive integer");
        const issue = await api.json<any>(`/repos/${repo}/issues/${n}`, { headers });
        const comments = await api.json<any[]>(`/repos/${repo}/issues/${n}/comments`, { headers, query: { per_page: 20 } });
        const text = [`${issue.title} (${issue.state}) by ${issue.user?.login ?? "?"}`, clip(issue.body, 3000), ...comments.map((c) => `${c.user?.login ?? "?"}: ${clip(c.body, 500)}`)].join("\n\n");
        return { passages: [appPassage({ slug: "github", id: String(issue.id), title: `${repo}#${n} ${issue.title}`, text, url: issue.html_url ?? null })] };
      },
    },
    {
      name: "read_file",
      description: "Read a file from a repository. Input: repo (`owner/name`), path, and optionally ref (branch, tag or commit).",
      inputSchema: {
        type: "object",
        properties: { repo: { type: "string", description: "owner/name" }, path: { type: "string" }, ref: { type: "string" } },
        required: ["repo", "path"],
        additionalProperties: false,
      },
      async execute(input, api) {
        const repo = repoArg(input);
        const path = stringArg(input, "path", 1000).replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/");
        const ref = typeof input.ref === "string" && input.ref ? input.ref : undefined;
        const file = await api.json<any>(`/repos/${repo}/contents/${path}`, { headers, query: { ref } });
        if (Array.isArray(file) || file.type !== "file") throw new ProviderError(400, `${input.path} is not a file`);
        const content = file.encoding === "base64" ? decodeBase64(file.content ?? "") : String(file.content ?? "");
        return { passages: [appPassage({ slug: "github", id: `${repo}/${file.path}@${file.sha}`, title: `${repo}/${file.path}`, text: clip(content, 4000), url: file.html_url ?? null })] };
      },
    },
  ],
};

const repoOf = (repositoryUrl: string | undefined) => (repositoryUrl ?? "").split("/repos/")[1] ?? "";

function repoArg(input: Record<string, unknown>): string {
  const repo = stringArg(input, "repo", 200);
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) throw new ProviderError(400, "repo must be owner/name");
  return repo;
}

function decodeBase64(b64: string): string {
  const bin = atob(b64.replace(/\s+/g, ""));
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

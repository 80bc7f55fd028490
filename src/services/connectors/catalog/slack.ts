import { appPassage, clip, ProviderError, searchTool, stringArg, type ConnectorDefinition, type ProviderApi, type TokenSet } from "../types";
import { badge } from "./logo";

/**
 * Slack OAuth v2 with user scopes (api.slack.com/authentication/oauth-v2): `user_scope` on
 * slack.com/oauth/v2/authorize, oauth.v2.access answers the user token under `authed_user` (and, with token
 * rotation, a refresh token and `expires_in`); auth.revoke revokes it. Web API methods answer HTTP 200 with
 * `ok: false` on errors. search.messages needs a user token (`search:read`).
 */
async function call<T>(api: ProviderApi, method: string, query: Record<string, string | number | undefined>): Promise<T> {
  const r = await api.json<any>(`/${method}`, { query });
  if (!r?.ok) {
    const error = String(r?.error ?? "unknown_error");
    const status = ["invalid_auth", "token_revoked", "token_expired", "not_authed", "account_inactive"].includes(error) ? 401 : error === "missing_scope" ? 403 : 400;
    throw new ProviderError(status, `Slack ${method}: ${error}`, error);
  }
  return r as T;
}

const permalink = (teamUrl: string | undefined, channel: string, ts: string) =>
  teamUrl ? `${teamUrl.replace(/\/+$/, "")}/archives/${channel}/p${ts.replace(".", "")}` : null;

export const slack: ConnectorDefinition = {
  slug: "slack",
  name: "Slack",
  description: "Search messages across the channels you are in, and read a channel's recent history.",
  logo: badge("S", "#4a154b"),
  category: "communication",
  endpoints: {
    authorize_url: "https://slack.com/oauth/v2/authorize",
    token_url: "https://slack.com/api/oauth.v2.access",
    api_base_url: "https://slack.com/api",
  },
  scopes: ["search:read", "channels:history", "groups:history", "channels:read", "groups:read"],
  scopeParam: "user_scope",
  scopeSeparator: ",",
  pkce: false,
  tokenAuth: "body",
  tokenEncoding: "form",
  parseToken(json): TokenSet {
    if (json.ok === false) throw new ProviderError(400, `Slack: ${json.error}`, String(json.error));
    const user = (json.authed_user ?? {}) as Record<string, unknown>;
    // The first exchange names the user token under authed_user; a rotation refresh answers it at the top level.
    const accessToken = (user.access_token ?? json.access_token) as string | undefined;
    if (!accessToken) throw new ProviderError(400, "Slack: no user token in the answer", "invalid_grant");
    const src = user.access_token ? user : json;
    return {
      accessToken,
      refreshToken: (src.refresh_token as string) ?? null,
      expiresIn: typeof src.expires_in === "number" ? src.expires_in : null,
      scope: (src.scope as string) ?? null,
      raw: json,
    };
  },
  async identify(api) {
    const me = await call<{ user: string; user_id: string; team: string; team_id: string; url: string }>(api, "auth.test", {});
    return { account: `${me.user}@${me.team}`, accountId: me.user_id, extra: { team_id: me.team_id, team_url: me.url } };
  },
  async revoke({ endpoints, accessToken, fetch }) {
    const res = await fetch(`${endpoints.api_base_url}/auth.revoke`, { method: "POST", headers: { Authorization: `Bearer ${accessToken}` } });
    if (!res.ok) throw new ProviderError(res.status, `Slack answered ${res.status} to the revocation`);
  },
  tools: [
    searchTool("Search Slack messages (Slack search syntax works, e.g. `in:#support invoice`).", 500, async (query, api) => {
      const r = await call<{ messages: { total: number; matches: any[] } }>(api, "search.messages", { query, count: 10, sort: "score" });
      const passages = r.messages.matches.map((m, i) =>
        appPassage({
          slug: "slack",
          id: `${m.channel?.id ?? "?"}:${m.ts}`,
          title: `#${m.channel?.name ?? "channel"} ${m.username ?? m.user ?? ""}`.trim(),
          text: `${m.username ?? m.user ?? "someone"} in #${m.channel?.name ?? "?"}: ${clip(m.text, 1500)}`,
          url: m.permalink ?? permalink(api.extra.team_url as string | undefined, m.channel?.id ?? "", m.ts),
          score: 1 / (i + 1),
        }),
      );
      return { text: `${r.messages.total} message(s) in Slack; ${passages.length} shown.`, passages };
    }),
    {
      name: "read_channel",
      description: "Read the most recent messages of a channel by its id (e.g. C0123456789).",
      inputSchema: {
        type: "object",
        properties: { channel: { type: "string" }, limit: { type: "integer", minimum: 1, maximum: 100 } },
        required: ["channel"],
        additionalProperties: false,
      },
      async execute(input, api) {
        const channel = stringArg(input, "channel", 40);
        if (!/^[A-Z0-9]+$/.test(channel)) throw new ProviderError(400, "channel must be a Slack channel id such as C0123456789");
        const limit = Math.min(100, Math.max(1, Number(input.limit) || 20));
        const r = await call<{ messages: any[] }>(api, "conversations.history", { channel, limit });
        const passages = r.messages
          .filter((m) => m.text)
          .map((m, i) =>
            appPassage({
              slug: "slack",
              id: `${channel}:${m.ts}`,
              title: `${channel} ${m.user ?? ""}`.trim(),
              text: `${m.user ?? "someone"}: ${clip(m.text, 1500)}`,
              url: permalink(api.extra.team_url as string | undefined, channel, m.ts),
              score: 1 / (i + 1),
            }),
          );
        return { text: `${passages.length} recent message(s) in ${channel}.`, passages };
      },
    },
  ],
};

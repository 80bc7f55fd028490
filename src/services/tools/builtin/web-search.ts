import { webSearch, webSearchConfigured } from "../../web/search";
import type { ToolProvider } from "../../../contracts/tools";

export const WEB_SEARCH_LIMIT = 3;

/** `web__search` when the turn has `websearch_enable` and WEB_SEARCH_URL is configured. */
export const webSearchProvider: ToolProvider = {
  name: "web",
  async tools(scope, settings) {
    if (!settings.websearch || !webSearchConfigured(scope.env)) return [];
    return [
      {
        name: "web__search",
        description: "Search the web. Returns numbered passages (title, snippet, URL) you can cite by their number.",
        inputSchema: {
          type: "object",
          properties: { query: { type: "string", minLength: 1, maxLength: 500 } },
          required: ["query"],
          additionalProperties: false,
        },
        kind: "passages",
        origin: { type: "internal" },
        plan: (question) => ({ query: question.slice(0, 500) }),
        async execute(input, ctx) {
          const passages = await webSearch(scope.env, String(input.query ?? ""), WEB_SEARCH_LIMIT, ctx.signal);
          return passages.length ? { passages } : { text: "The web search found nothing." };
        },
      },
    ];
  },
};

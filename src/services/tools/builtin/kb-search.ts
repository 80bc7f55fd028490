import { createRetriever } from "../../retrieval/retriever";
import type { Tool, ToolProvider } from "../../../contracts/tools";

/** Passages one kb__search call returns. */
export const KB_SEARCH_LIMIT = 5;

/**
 * `kb__search`: hybrid retrieval over the turn's knowledge base (always in the
 * toolbox). The plan stage calls it for every model (one pass in quick mode,
 * one per part of the question in deep mode); a tool-calling model may call it
 * again with focused queries.
 */
export const kbSearchProvider: ToolProvider = {
  name: "kb",
  async tools(scope) {
    const retriever = createRetriever(scope.db, scope.env, scope.kb, scope.actor);
    const tool: Tool = {
      name: "kb__search",
      description:
        `Search the knowledge base "${scope.kb.name}" for passages relevant to a focused query. ` +
        "Returns numbered passages you can cite by their number.",
      inputSchema: {
        type: "object",
        properties: { query: { type: "string", minLength: 1, maxLength: 500, description: "A focused search query" } },
        required: ["query"],
        additionalProperties: false,
      },
      kind: "passages",
      origin: { type: "internal" },
      plan: (question) => ({ query: question }),
      async execute(input, ctx) {
        const query = String(input.query ?? "").trim();
        if (!query) return { text: "The query is empty.", isError: true };
        const limit = typeof input.limit === "number" ? Math.max(1, Math.min(50, Math.floor(input.limit))) : KB_SEARCH_LIMIT;
        const passages = await retriever(query, limit, ctx.signal);
        return passages.length ? { passages } : { text: "No passages found for this query." };
      },
    };
    return [tool];
  },
};

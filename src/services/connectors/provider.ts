import { ApiError } from "../../lib/errors";
import type { Tool, ToolProvider } from "../../contracts/tools";
import { connectorBySlug } from "./catalog";
import { ownerKeyOfSubject } from "./connections";
import { ProviderError } from "./types";
import { ConnectionUnusable, runConnectorTool, unconnectedSlugs } from "./use";

/**
 * Connected apps in turns (API-DECISIONS "Connectors", "One agent loop with a toolbox"): each app named in
 * `connector_slugs` and connected by the turn's subject adds its tools as `app__<slug>__<tool>` (deep mode).
 * The connection is found from the turn's subject alone — `user:<id>`, or `ext:<id>` within the chat's
 * tenant — never from anything the model says. `local-extractive` calls each app's `search` once.
 */
export const connectorToolProvider: ToolProvider = {
  name: "connectors",

  async validate(scope, settings) {
    if (!settings.connectorSlugs.length) return;
    const ownerKey = ownerKeyOfSubject(scope.subject, scope.chat.tenantId);
    const missing = await unconnectedSlugs(scope.db, ownerKey, settings.connectorSlugs);
    if (missing.length) {
      throw new ApiError("connector_not_connected", `Not connected: ${missing.join(", ")}. Connect ${missing.length > 1 ? "them" : "it"} with POST /connectors/add first`, {
        details: missing.map((slug) => ({ path: `body.connector_slugs.${settings.connectorSlugs.indexOf(slug)}`, message: `${slug} is ${connectorBySlug(slug) ? "not connected" : "not a known connector"}` })),
      });
    }
  },

  async tools(scope, settings) {
    if (scope.mode !== "deep" || !settings.connectorSlugs.length) return [];
    const ownerKey = ownerKeyOfSubject(scope.subject, scope.chat.tenantId);
    if (!ownerKey) return [];
    const tools: Tool[] = [];
    for (const slug of [...new Set(settings.connectorSlugs)]) {
      const def = connectorBySlug(slug);
      if (!def) continue;
      for (const t of def.tools) {
        tools.push({
          name: `app__${slug}__${t.name}`,
          description: `${def.name}: ${t.description}`,
          inputSchema: t.inputSchema,
          kind: "passages",
          origin: { type: "connector", slug, tool: t.name },
          plan: t.name === "search" ? (question) => ({ query: question.slice(0, 500) }) : undefined,
          async execute(input, ctx) {
            try {
              const r = await runConnectorTool({ db: ctx.scope.db, env: ctx.scope.env }, ownerKey, slug, t.name, input ?? {}, ctx.signal);
              return { text: r.text, passages: r.passages ?? [] };
            } catch (e) {
              if (e instanceof ConnectionUnusable || e instanceof ProviderError) return { isError: true, text: e.message };
              throw e;
            }
          },
        });
      }
    }
    return tools;
  },
};

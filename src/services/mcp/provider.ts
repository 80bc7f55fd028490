import type { JSONSchema7 } from "ai";
import type { McpServer } from "../../db/schema";
import type { Tool, ToolProvider } from "../../contracts/tools";
import { callServerTool, discoverTools } from "./client";
import { assertNoForeignServers, getMcpServer, manifestIsStale, serversOfOrganization } from "./servers";

/**
 * The enabled MCP servers' tools in a turn's toolbox (API-DECISIONS "One agent
 * loop with a toolbox"): `mcp__<server-slug>__<tool>`, for tool-calling models
 * only (no `plan`: local-extractive never calls MCP tools). Only registrations
 * of the chat's organization that still exist and are `ready` contribute; a
 * manifest older than an hour is refreshed first.
 */

const MAX_TOOL_NAME = 64; // what OpenAI-compatible APIs accept
const REFRESH_TIMEOUT_MS = 10_000;

/** A registration's name lower-cased to [a-z0-9_], at most 24 characters. */
export function serverSlug(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 24);
  return slug || "server";
}

/** Slugs for the turn's servers, made unique with a numeric suffix (still at most 24 characters). */
export function uniqueSlugs(servers: Pick<McpServer, "id" | "name">[]): Map<string, string> {
  const used = new Set<string>();
  const out = new Map<string, string>();
  for (const s of servers) {
    const base = serverSlug(s.name);
    let slug = base;
    for (let n = 2; used.has(slug); n++) slug = `${base.slice(0, 24 - String(n).length - 1)}_${n}`;
    used.add(slug);
    out.set(s.id, slug);
  }
  return out;
}

export function toolName(slug: string, tool: string): string {
  const safe = tool.replace(/[^a-zA-Z0-9_-]+/g, "_");
  return `mcp__${slug}__${safe}`.slice(0, MAX_TOOL_NAME);
}

async function refreshed(scope: Parameters<ToolProvider["tools"]>[0], row: McpServer): Promise<McpServer> {
  if (!manifestIsStale(row)) return row;
  await discoverTools(scope.env, scope.db, row.id, AbortSignal.timeout(REFRESH_TIMEOUT_MS));
  return (await getMcpServer(scope.db, row.id)) ?? row;
}

export const mcpToolProvider: ToolProvider = {
  name: "mcp",

  async validate(scope, settings) {
    if (!settings.mcpServerIds.length) return;
    // Deleted registrations are left out at use; an id of another organization is refused.
    await assertNoForeignServers(scope.db, scope.chat.organizationId, settings.mcpServerIds, "mcp_server_ids");
  },

  async tools(scope, settings) {
    if (!settings.mcpServerIds.length) return [];
    const rows = await serversOfOrganization(scope.db, scope.chat.organizationId, settings.mcpServerIds);
    const current = await Promise.all(rows.filter((r) => r.status === "ready").map((r) => refreshed(scope, r).catch(() => r)));
    const ready = current.filter((r) => r.status === "ready");
    const slugs = uniqueSlugs(ready);
    const tools: Tool[] = [];
    const names = new Set<string>();
    for (const server of ready) {
      for (const t of server.manifest) {
        const name = toolName(slugs.get(server.id)!, t.name);
        if (names.has(name)) continue;
        names.add(name);
        tools.push({
          name,
          description: `${t.description || t.name} (tool "${t.name}" of the MCP server "${server.name}")`.slice(0, 2000),
          inputSchema: (t.input_schema && typeof t.input_schema === "object" ? t.input_schema : { type: "object" }) as JSONSchema7,
          kind: "text",
          origin: { type: "mcp", serverId: server.id, tool: t.name },
          async execute(input, ctx) {
            // The registration may have been deleted since the toolbox was built: it must not be used any more.
            const row = await getMcpServer(ctx.scope.db, server.id);
            if (!row || row.organizationId !== ctx.scope.chat.organizationId) {
              return { text: "This MCP server is no longer registered.", isError: true };
            }
            const result = await callServerTool(ctx.scope.env, ctx.scope.db, server.id, t.name, input ?? {}, ctx.signal, { resources: ctx.scope.resources });
            if (result.isError) return { text: result.text || "The tool reported an error.", isError: true };
            if (!result.text.trim()) return { text: "(the tool returned nothing)" };
            // A successful result is a citable passage: the loop numbers it, and an answer that cites it gets it as a source.
            return { passages: [{ document_id: null, filename: `${server.name}: ${t.name}`, chunk_id: null, text: result.text, score: 1, page: null, url: null }] };
          },
        });
      }
    }
    return tools;
  },
};

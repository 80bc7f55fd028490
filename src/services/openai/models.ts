import { and, asc, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import type { KeyCaller } from "../../contracts/caller";
import { agents } from "../../db/schema";
import { reachableKnowledgeBases } from "../mcp/kb-server";

const MAX_AGENTS = 200;

const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/**
 * GET /openai/models: what the key can ask, as OpenAI model objects — each active knowledge base it
 * reaches (`kb:<id>`, answering with the default model; `kb:<id>:<model id>` picks another from
 * GET /chats/models) and each active agent over one of them (`agent:<id>`). The reach is the MCP
 * endpoint's (environment, tenant allowlist, one knowledge base), the same as the REST routes'.
 */
export async function listCompletionModels(ctx: ServiceContext, key: KeyCaller) {
  const kbs = (await reachableKnowledgeBases(ctx, key)).filter((kb) => kb.status === "active");
  const kbIds = new Set(kbs.map((kb) => kb.id));
  // The agents of those knowledge bases: the key's reach again (its container columns), then the list above.
  const k = key.key;
  const conditions = [eq(agents.organizationId, k.organizationId), eq(agents.environmentId, k.environmentId), eq(agents.status, "active")];
  if (!key.isAdmin && k.tenantIds.length) conditions.push(inArray(agents.tenantId, k.tenantIds));
  if (k.knowledgeBaseId) conditions.push(eq(agents.knowledgeBaseId, k.knowledgeBaseId));
  const rows = kbIds.size
    ? await ctx.db.select().from(agents).where(and(...conditions)).orderBy(asc(agents.createdAt), asc(agents.id)).limit(MAX_AGENTS).all()
    : [];
  const reachableAgents = rows.filter((a) => kbIds.has(a.knowledgeBaseId));
  return {
    object: "list" as const,
    data: [
      ...kbs.map((kb) => ({
        id: `kb:${kb.id}`,
        object: "model" as const,
        created: unix(kb.createdAt),
        owned_by: kb.tenantId,
        name: kb.name,
        description: kb.description ?? null,
      })),
      ...reachableAgents.map((a) => ({
        id: `agent:${a.id}`,
        object: "model" as const,
        created: unix(a.createdAt),
        owned_by: a.tenantId,
        name: a.config.name,
        description: a.config.description ?? null,
      })),
    ],
  };
}

import { and, asc, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { z } from "zod";
import { authorize, may } from "../../auth/authorize";
import type { KeyCaller } from "../../contracts/caller";
import { knowledgeBases, type KnowledgeBase, type Source } from "../../db/schema";
import { ApiError } from "../../lib/errors";
import { createRetriever } from "../retrieval/retriever";
import { passagesToSources } from "../../contracts/turn";
import { actorOf, assertCanSpend } from "../billing/metering";
import { createChat, truncateTitle } from "../chats/chats";
import { answeredOrThrow, runTurnJson } from "../chats/session";
import { prepareTurn, resolveModel } from "../chats/turns";
import { getKnowledgeBase, knowledgeBaseScope } from "../knowledge-bases";
import { refusalForgets, rememberPlacement, searchAhead, searchedAhead } from "../chats/search-ahead";

/**
 * Each knowledge base as an MCP server: POST /api/v1/mcp (Streamable HTTP,
 * stateless, JSON responses) authenticated with an API key or an OAuth access
 * token (src/services/mcp-oauth: a key limited to its grant). The tools act as
 * that key, through the same authorization layer as the REST routes: a key sees
 * only its environment, its allowed tenants and (when restricted) its one
 * knowledge base, or a grant's; `ask` is metered like fast-query.
 */

type Ctx = ServiceContext;
const DEFAULT_MODEL = "local-extractive";
const MAX_LISTED = 200;

/**
 * Knowledge bases the key may use, as the one access policy decides (`may` → `authorize`, for each): the query
 * only narrows the candidates to what the key's own row fixes (its environment, its tenant allowlist, its one
 * knowledge base, a grant's several), so the list stays bounded; the policy answers for every one listed.
 */
export async function reachableKnowledgeBases(ctx: Ctx, key: KeyCaller): Promise<KnowledgeBase[]> {
  const k = key.key;
  const conditions = [eq(knowledgeBases.organizationId, k.organizationId), eq(knowledgeBases.environmentId, k.environmentId)];
  if (!key.isAdmin && k.tenantIds.length) conditions.push(inArray(knowledgeBases.tenantId, k.tenantIds));
  if (k.knowledgeBaseId) conditions.push(eq(knowledgeBases.id, k.knowledgeBaseId));
  if (key.oauth) conditions.push(inArray(knowledgeBases.id, [...key.oauth.knowledgeBaseIds]));
  const candidates = await ctx.db
    .select()
    .from(knowledgeBases)
    .where(and(...conditions))
    .orderBy(asc(knowledgeBases.createdAt), asc(knowledgeBases.id))
    .limit(MAX_LISTED)
    .all();
  const allowed = await Promise.all(candidates.map((kb) => may(ctx, "query:rag", knowledgeBaseScope(kb)!)));
  return candidates.filter((_, i) => allowed[i]);
}

/** The knowledge base a tool call names, authorized for the key; or the only one it can reach. */
async function resolveKb(ctx: Ctx, key: KeyCaller, id: string | undefined): Promise<KnowledgeBase> {
  if (!id) {
    const all = await reachableKnowledgeBases(ctx, key);
    if (all.length === 1) return all[0];
    throw new ApiError("invalid_request", "knowledge_base_id is required: this credential reaches several knowledge bases (call list_knowledge_bases)");
  }
  const kb = await getKnowledgeBase(ctx.db, id);
  await authorize(ctx, "query:rag", knowledgeBaseScope(kb), { what: "Knowledge base" });
  if (kb!.status !== "active") throw new ApiError("knowledge_base_inactive", "This knowledge base is inactive");
  return kb!;
}

const text = (t: string, structured?: Record<string, unknown>, isError = false) => ({
  content: [{ type: "text" as const, text: t }],
  ...(structured ? { structuredContent: structured } : {}),
  ...(isError ? { isError: true } : {}),
});

/** Refusals and failures are tool errors the client can read, never protocol failures or internals. */
async function asTool<T>(fn: () => Promise<T>): Promise<T | ReturnType<typeof text>> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError) return text(`${e.code}: ${e.message}`, undefined, true);
    console.error("MCP endpoint tool failed:", e);
    return text("internal_error: the tool failed; try again later", undefined, true);
  }
}

function renderPassages(passages: Source[]): string {
  if (!passages.length) return "No passages matched.";
  return passages
    .map((p) => `[${p.index}] ${p.filename ?? p.url ?? "source"}${p.page ? ` (page ${p.page})` : ""}\n${p.text}`)
    .join("\n\n");
}

const kbIdInput = z.string().min(1).max(128).optional().describe("The knowledge base; optional when this connection reaches only one (see list_knowledge_bases)");

async function listKnowledgeBasesTool(ctx: Ctx, key: KeyCaller) {
  const kbs = (await reachableKnowledgeBases(ctx, key)).map((kb) => ({ id: kb.id, name: kb.name, description: kb.description, tenant_id: kb.tenantId, status: kb.status }));
  const lines = kbs.map((kb) => `${kb.id}: ${kb.name}${kb.description ? ` — ${kb.description}` : ""}${kb.status !== "active" ? " (inactive)" : ""}`);
  return text(lines.join("\n") || "No knowledge bases.", { knowledge_bases: kbs });
}

async function searchKbTool(ctx: Ctx, key: KeyCaller, input: { query: string; knowledge_base_id?: string; limit?: number }) {
  const limit = input.limit ?? 6;
  // Started alongside the knowledge base's authorization when this caller searched it before (search-ahead.ts).
  const reach = input.knowledge_base_id ? { knowledgeBaseId: input.knowledge_base_id } : null;
  const ahead = reach ? searchAhead(ctx, reach, input.query, limit) : null;
  const resolved = resolveKb(ctx, key, input.knowledge_base_id);
  const kb = await (reach ? refusalForgets(key, reach, resolved) : resolved);
  rememberPlacement(key, { knowledgeBaseId: kb.id }, kb);
  const found = (await searchedAhead(ctx, ahead, kb)) ?? (await createRetriever(ctx.db, ctx.env, kb, actorOf(key))(input.query, limit));
  const passages = passagesToSources(found);
  return text(renderPassages(passages), { knowledge_base_id: kb.id, results: passages });
}

/** A fast-query turn in a new query chat of the key: cited answer, metered like POST /chats/fast-query. */
async function askKbTool(ctx: Ctx, key: KeyCaller, input: { question: string; knowledge_base_id?: string; model?: string }) {
  const kb = await resolveKb(ctx, key, input.knowledge_base_id);
  const m = resolveModel(ctx, input.model ?? DEFAULT_MODEL, "model");
  const db = ctx.db;
  // Refused before the query chat exists; the turn reuses this check.
  const spend = assertCanSpend(db, kb.tenantId);
  await spend;
  const chat = await createChat(db, {
    id: crypto.randomUUID(),
    kb,
    model: m.id,
    title: truncateTitle(input.question.replace(/\s+/g, " ").trim().slice(0, 80)),
    ownerUserId: null,
    apiKeyId: key.key.id,
    externalSubjectId: null,
    agentMode: "quick",
    isQuery: true,
    settings: {},
  });
  const cmd = await prepareTurn(ctx, key, chat, kb, {
    content: input.question,
    model: m,
    mode: "quick",
    websearch: false,
    operation: "fast_query",
    extras: { connector_slugs: [], delegate_agent_ids: [], skill_ids: [], attached_artifact_ids: [] },
    spend,
  });
  // A failing model is an error result (upstream_error and the reason), never an empty answer.
  const outcome = answeredOrThrow(await runTurnJson(ctx.env, cmd));
  const sources: Source[] = outcome.sources;
  const rendered = `${outcome.assistant_message.content}\n\nSources:\n${renderPassages(sources)}`;
  return text(rendered, { answer: outcome.assistant_message.content, sources, usage: outcome.usage, chat_id: chat.id });
}

/** The MCP server of one request: `list_knowledge_bases`, `search` and `ask` over the knowledge bases the key reaches. */
export async function buildKbMcpServer(ctx: Ctx, key: KeyCaller) {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const server = new McpServer({ name: "kb-chat-service", version: "1.0.0" });
  server.registerTool(
    "list_knowledge_bases",
    { description: "The knowledge bases this connection may search and ask.", inputSchema: {} },
    async () => asTool(() => listKnowledgeBasesTool(ctx, key)),
  );
  server.registerTool(
    "search",
    {
      description: "Hybrid (lexical + vector) search of a knowledge base: the best passages, numbered for citation, with their documents.",
      inputSchema: { query: z.string().min(1).max(2000), knowledge_base_id: kbIdInput, limit: z.number().int().min(1).max(20).optional() },
    },
    async (input) => asTool(() => searchKbTool(ctx, key, input)),
  );
  server.registerTool(
    "ask",
    {
      description: "A grounded answer from a knowledge base, citing its sources as [n]. Metered like fast-query.",
      inputSchema: {
        question: z.string().min(1).max(8000),
        knowledge_base_id: kbIdInput,
        model: z.string().min(1).max(200).optional().describe(`A model id from GET /chats/models (default ${DEFAULT_MODEL})`),
      },
    },
    async (input) => asTool(() => askKbTool(ctx, key, input)),
  );
  return server;
}

/**
 * One Streamable HTTP request to the knowledge-base MCP server, stateless (a server per request, JSON
 * responses): the SDK's transport reads the JSON-RPC request and answers with a plain Response.
 */
export async function answerKbMcp(ctx: Ctx, key: KeyCaller, request: Request): Promise<Response> {
  const { WebStandardStreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js");
  const server = await buildKbMcpServer(ctx, key);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    ctx.waitUntil(server.close().catch(() => {}));
  }
}

import type { ChatTodo, TodoItem } from "../../../db/schema";
import { terms } from "../../../lib/text";
import { nowIso } from "../../../lib/time";
import { TodoWriter } from "../todo-writer";
import { raceAbort } from "../tool-runner";
import { webSearchConfigured } from "../../web/search";
import { isLocal, thought, type TurnContext } from "../context";
import type { History } from "../history";
import { decompose } from "../plan";
import type { Passage } from "../../../contracts/turn";

export const QUICK_PASSAGES = 6;
export const DEEP_PASSAGES_PER_PART = 5;
/** Sources the initial retrieval contributes (tools may add more, up to MAX_TURN_SOURCES). */
export const MAX_SOURCES = 12;

export interface PlanResult {
  /** The parts of the question (deep mode), or just the question. */
  parts: string[];
  /** Marks the todo list's last step done once the answer exists (deep mode). */
  finishTodo: (() => Promise<void>) | null;
}

/** Short follow-ups ("and the price?") are searched together with the previous question. */
function retrievalQuery(content: string, history: History): string {
  if (terms(content).length >= 3) return content;
  const previous = [...history.recent].reverse().find((m) => m.role === "user");
  return previous ? `${previous.content} ${content}` : content;
}

/**
 * Stage: plan. Every model gets the same grounding before it answers: context
 * providers (memory), knowledge-base search through `kb__search` (one pass in
 * quick mode; one per part of the question, with a todo list, in deep mode),
 * web search when enabled. For `local-extractive` the plan also calls, once,
 * every other tool that has a `plan` (delegates, connected apps' search, SQL,
 * auto skills); a tool-calling model decides about those itself in the loop.
 */
export async function planStage(ctx: TurnContext, history: History): Promise<PlanResult> {
  const { req } = ctx;
  const query = retrievalQuery(req.content, history);
  let parts = [req.content];
  let finishTodo: PlanResult["finishTodo"] = null;
  let passages: Passage[];
  let context: Passage[];
  if (req.mode === "quick") {
    // Independent, and the quick search emits no events: memory and the knowledge base are searched together.
    [context, passages] = await Promise.all([gatherContext(ctx), planSearch(ctx, query, req.chunkCount ?? QUICK_PASSAGES)]);
  } else {
    context = await gatherContext(ctx);
    parts = decompose(req.content);
    if (!parts.length) parts = [req.content];
    const deep = await deepSearch(ctx, parts, query);
    passages = deep.passages;
    finishTodo = deep.finishTodo;
  }
  passages.push(...(await webSearchPass(ctx)));

  const initial = [...context, ...dedupe(passages).slice(0, MAX_SOURCES)];
  if (isLocal(req.model) && req.attachments?.length) {
    // local-extractive cannot read a prompt: attached artifacts become citable passages.
    initial.unshift(
      ...req.attachments.map((a) => ({
        document_id: null,
        filename: `Artifact: ${a.title}`,
        chunk_id: null,
        text: a.content.slice(0, 20_000),
        score: 1,
        page: null,
        url: null,
      })),
    );
  }
  ctx.ledger.add(initial);
  if (isLocal(req.model)) await runOfflinePlan(ctx);
  return { parts, finishTodo };
}

async function gatherContext(ctx: TurnContext): Promise<Passage[]> {
  const out: Passage[] = [];
  for (const provider of ctx.deps.capabilities.context) {
    try {
      const r = await provider.gather(ctx.scope, ctx.req.content, ctx.signal);
      if (!r) continue;
      if (r.thought) await thought(ctx, r.thought);
      out.push(...r.passages);
      Object.assign(ctx.contextMetadata, r.metadata ?? {});
    } catch (e) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      console.error(`context provider ${provider.name} failed in chat ${ctx.req.chat.id}:`, e instanceof Error ? e.message : e);
    }
  }
  return out;
}

/** A search of the plan: the one the Worker ran ahead for this turn when it searched the same (src/services/chats/search-ahead.ts). */
async function planSearch(ctx: TurnContext, query: string, limit: number): Promise<Passage[]> {
  // Still on its way from the Worker (its second line): a stopped turn does not wait for it.
  const ahead = ctx.req.searchedAhead && (await raceAbort(ctx.req.searchedAhead, ctx.signal));
  if (ahead && ahead.query === query && ahead.limit === limit && ctx.toolbox.get("kb__search")) return ahead.passages;
  return searchKb(ctx, query, limit);
}

async function searchKb(ctx: TurnContext, query: string, limit: number): Promise<Passage[]> {
  const tool = ctx.toolbox.get("kb__search");
  if (!tool) return [];
  const out = await tool.execute({ query, limit }, { signal: ctx.signal, scope: ctx.scope, emit: ctx.emit, callId: "plan" });
  return out.passages ?? [];
}

async function deepSearch(ctx: TurnContext, parts: string[], query: string) {
  const items: TodoItem[] = [
    ...parts.map((p, i) => ({ id: `t${i + 1}`, content: `Search the knowledge base: ${p}`, status: "pending" as const })),
    { id: `t${parts.length + 1}`, content: "Write the answer with citations", status: "pending" },
  ];
  const todo: ChatTodo = { items, updated_at: nowIso() };
  // Streamed at once, saved in the background (todo-writer.ts); `done` waits for the last save.
  const saved = new TodoWriter(ctx.deps.db, ctx.req.chat.id);
  ctx.offPath.push(() => saved.settled());
  const publishTodo = async () => {
    todo.updated_at = nowIso();
    saved.save(todo);
    await ctx.emit({ type: "todo_update", todo: structuredClone(todo) });
  };
  await thought(ctx, parts.length > 1 ? `Breaking the question into ${parts.length} parts.` : "Planning the research.");
  await publishTodo();
  const passages: Passage[] = [];
  for (let i = 0; i < parts.length; i++) {
    items[i].status = "in_progress";
    await publishTodo();
    await thought(ctx, `Searching the knowledge base for "${parts[i]}".`);
    const found = await planSearch(ctx, parts.length > 1 ? parts[i] : query, DEEP_PASSAGES_PER_PART);
    const docs = new Set(found.map((p) => p.document_id ?? p.url)).size;
    await thought(ctx, `Found ${found.length} passage${found.length === 1 ? "" : "s"} in ${docs} document${docs === 1 ? "" : "s"}.`);
    passages.push(...found);
    items[i].status = "completed";
    await publishTodo();
  }
  items[items.length - 1].status = "in_progress";
  await publishTodo();
  // The list stays persisted after the turn (GET /chats/:id/todo); its last step is
  // marked done in storage only, since no todo_update may follow the answer.
  const finishTodo = async () => {
    items[items.length - 1].status = "completed";
    todo.updated_at = nowIso();
    saved.save(todo);
  };
  return { passages, finishTodo };
}

async function webSearchPass(ctx: TurnContext): Promise<Passage[]> {
  if (!ctx.req.tools.websearch) return [];
  const tool = ctx.toolbox.get("web__search");
  if (!tool || !webSearchConfigured(ctx.deps.env)) {
    await thought(ctx, "Web search is not configured on this service; answering from the knowledge base only.");
    return [];
  }
  await thought(ctx, `Searching the web for "${ctx.req.content.slice(0, 120)}".`);
  try {
    const out = await tool.execute({ query: ctx.req.content.slice(0, 500) }, { signal: ctx.signal, scope: ctx.scope, emit: ctx.emit, callId: "plan" });
    return out.passages ?? [];
  } catch (e) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    await thought(ctx, `Web search failed (${(e as Error).message}); answering from the knowledge base only.`);
    return [];
  }
}

/** The deterministic plan of local-extractive: each other tool with a plan, once, in toolbox order. */
async function runOfflinePlan(ctx: TurnContext): Promise<void> {
  for (const tool of ctx.toolbox.tools) {
    if (tool.name === "kb__search" || tool.name === "web__search" || !tool.plan || tool.origin.type === "mcp") continue;
    const input = tool.plan(ctx.req.content, ctx.scope);
    if (input) await ctx.runner.call(tool, input);
  }
}

function dedupe(passages: Passage[]): Passage[] {
  const seen = new Set<string>();
  return passages.filter((p) => {
    const key = p.chunk_id ?? `${p.url}|${p.text.slice(0, 80)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

import type { ModelMessage } from "ai";
import { config, DEFAULT_MAX_TOOL_STEPS } from "../../../lib/config";
import type { Env } from "../../../env";
import { estimateTokens } from "../../../lib/text";
import { loadImages } from "../../chats/images";
import { streamAnswer, streamAnswerWithTools, type LoopTool } from "../../models/llm";
import { isLocal, publishSources, type TurnContext } from "../context";
import { extractiveAnswer, NO_ANSWER, renderExtractive, selectSentences } from "../extractive";
import type { History } from "../history";
import { systemPrompt } from "../prompt";

export { DEFAULT_MAX_TOOL_STEPS };

/** Tool steps a tool-calling model may take in one turn (MAX_TOOL_STEPS, at most 32). */
export const maxToolSteps = (env: Env) => config(env).models.maxToolSteps;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

/**
 * Stage: generation. Streams the answer through `onDelta` (partial
 * final_response events) and returns when it is complete; the caller sanitizes
 * citations and emits the complete answer.
 */
export async function generateStage(ctx: TurnContext, history: History, parts: string[], onDelta: (text: string) => Promise<void>) {
  if (isLocal(ctx.req.model)) return generateExtractive(ctx, parts, onDelta);
  return generateWithModel(ctx, history, onDelta);
}

async function generateExtractive(ctx: TurnContext, parts: string[], onDelta: (text: string) => Promise<void>) {
  const { req } = ctx;
  await publishSources(ctx);
  const passages = ctx.ledger.all.map((s) => ({ index: s.index, text: s.text, memory: !!s.memory_id }));
  let answer: string;
  if (req.mode === "deep" && parts.length > 1) {
    // One short section per part of the question.
    answer = parts
      .map((part) => {
        const { picks, empty } = selectSentences(part, passages, { maxSentences: 3 });
        return `**${part}**\n${empty ? NO_ANSWER : renderExtractive(picks)}`;
      })
      .join("\n\n");
    ctx.used.input_tokens += estimateTokens(req.content) + passages.reduce((n, p) => n + estimateTokens(p.text), 0);
  } else {
    const r = extractiveAnswer(req.content, passages, { maxSentences: req.mode === "deep" ? 6 : 4 });
    answer = r.content;
    ctx.used.input_tokens += r.usage.input_tokens;
  }
  // Stream it word by word, as a generating model would.
  const delay = config(ctx.deps.env).localModelTokenDelayMs;
  let emitted = "";
  for (const piece of answer.match(/\S+\s*/g) ?? []) {
    ctx.signal.throwIfAborted();
    if (delay > 0) await sleep(delay, ctx.signal);
    emitted += piece;
    await onDelta(piece);
  }
  ctx.used.output_tokens += Math.ceil(emitted.length / 4);
}

function toModelMessages(history: History, content: string, images: Array<{ data: Uint8Array; mediaType: string }> = []): ModelMessage[] {
  const msgs: ModelMessage[] = history.recent.filter((m) => m.content.trim()).map((m) => ({ role: m.role, content: m.content }) as ModelMessage);
  if (images.length) {
    msgs.push({
      role: "user",
      content: [{ type: "text", text: content }, ...images.map((img) => ({ type: "image" as const, image: img.data, mediaType: img.mediaType }))],
    });
  } else {
    msgs.push({ role: "user", content });
  }
  return msgs;
}

/** Tools a provider model gets: the whole toolbox in deep mode; in quick mode only when the turn has tools beyond search. */
function loopTools(ctx: TurnContext): LoopTool[] {
  const extra = ctx.toolbox.tools.some((t) => t.name !== "kb__search" && t.name !== "web__search");
  if (ctx.req.mode === "quick" && !extra) return [];
  return ctx.toolbox.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    execute: async (input, callId) => (await ctx.runner.call(tool, input, callId)).text,
  }));
}

async function generateWithModel(ctx: TurnContext, history: History, onDelta: (text: string) => Promise<void>) {
  const { req, deps } = ctx;
  const tools = loopTools(ctx);
  const system = systemPrompt(req.kb, ctx.ledger.all, {
    mode: req.mode,
    skills: req.skills,
    attachments: req.attachments,
    summary: history.summary,
    instructions: req.instructions,
    tools: tools.length > 0,
  });
  const messages = toModelMessages(history, req.content, req.images?.length ? await loadImages(deps.env, req.images) : []);
  if (!tools.length) {
    await publishSources(ctx);
    const r = await streamAnswer(deps.env, req.model, { system, messages, signal: ctx.signal, onDelta });
    ctx.used.input_tokens += r.usage.input_tokens;
    ctx.used.output_tokens += r.usage.output_tokens;
    return;
  }
  // Sources go out just before the first words of the answer, after the tool calls that found them.
  const r = await streamAnswerWithTools(deps.env, req.model, {
    system,
    messages,
    tools,
    maxSteps: maxToolSteps(deps.env),
    signal: ctx.signal,
    onDelta: async (text) => {
      await publishSources(ctx);
      await onDelta(text);
    },
  });
  ctx.used.input_tokens += r.usage.input_tokens;
  ctx.used.output_tokens += r.usage.output_tokens;
}

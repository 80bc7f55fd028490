import type { Source, TurnUsage } from "../../db/schema";
import type { TurnEvent } from "../../contracts/turn";
import { turnEvents } from "../chats/turn-events";
import type { CompletionAnswer } from "./completions";

/**
 * Our answers in OpenAI's chat-completion shapes (what the `openai` package and OpenAI-compatible
 * chat UIs read): `chat.completion` objects, and `chat.completion.chunk` SSE events with `id`,
 * `object`, `created` and `model` on every chunk (the SDK's stream helper loses them otherwise), a
 * last chunk with `finish_reason` and our `sources`, a usage chunk with `choices: []` when the
 * request asked for it (`stream_options.include_usage`), then `[DONE]`. Citations stay `[n]` in the
 * text, numbered like `sources[].index`.
 */

export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
}

export const completionId = (id: string) => `chatcmpl-${id}`;

export function openAiUsage(u: TurnUsage | null | undefined) {
  const prompt = u?.input_tokens ?? 0;
  const completion = u?.output_tokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: u?.total_tokens ?? prompt + completion };
}

/** The non-streamed answer: one choice whose message carries the cited text and its sources. */
export function completionBody(meta: CompletionMeta, a: CompletionAnswer) {
  return {
    id: completionId(meta.id),
    object: "chat.completion" as const,
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant" as const, content: a.content, refusal: null, sources: a.sources },
        finish_reason: "stop" as const,
        logprobs: null,
      },
    ],
    usage: openAiUsage(a.usage),
    chat_id: a.chatId,
  };
}

const encoder = new TextEncoder();
const line = (data: unknown) => encoder.encode(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);

/** OpenAI error `type`s for our turn error codes. */
const errorType = (code: string) => (code === "model_error" ? "upstream_error" : code === "insufficient_credits" ? "insufficient_quota" : "server_error");

/**
 * The turn's events as OpenAI chunks. Deltas are the partial answers; the complete answer adds
 * only what the partials did not carry. A turn error is a last `{"error": …}` event (the `openai`
 * package throws it as an APIError). A client that leaves cancels the turn's stream (it stops and
 * saves its partial answer, as on any chat stream).
 */
export function completionStream(meta: CompletionMeta, events: ReadableStream<Uint8Array>, includeUsage: boolean): Response {
  const base = { id: completionId(meta.id), object: "chat.completion.chunk" as const, created: meta.created, model: meta.model };
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ ...base, choices, ...extra });
  const iterator = turnEvents(events);
  let sent = "";
  let sources: Source[] = [];
  let ended = false;

  const translate = (ev: TurnEvent): unknown[] => {
    if (ev.type === "user_message") return [chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null, logprobs: null }])];
    if (ev.type === "sources") sources = ev.sources;
    if (ev.type === "final_response") {
      const delta = ev.isComplete ? (ev.content.startsWith(sent) ? ev.content.slice(sent.length) : "") : ev.content;
      if (!delta) return [];
      sent += delta;
      return [chunk([{ index: 0, delta: { content: delta }, finish_reason: null, logprobs: null }])];
    }
    if (ev.type === "done") {
      ended = true;
      const out: unknown[] = [chunk([{ index: 0, delta: {}, finish_reason: "stop", logprobs: null }], { sources, chat_id: ev.chat_id })];
      if (includeUsage) out.push(chunk([], { usage: openAiUsage(ev.usage) }));
      out.push("[DONE]");
      return out;
    }
    if (ev.type === "error") {
      ended = true;
      return [{ error: { message: ev.message, type: errorType(ev.code), code: ev.code } }];
    }
    return [];
  };

  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = ended ? { done: true as const, value: undefined } : await iterator.next().catch(() => ({ done: true as const, value: undefined }));
        if (next.done) {
          if (!ended) controller.enqueue(line({ error: { message: "The answer stream ended early", type: "server_error", code: "internal_error" } }));
          await iterator.return(undefined);
          return controller.close();
        }
        const out = translate(next.value);
        for (const data of out) controller.enqueue(line(data));
        if (out.length) return;
      }
    },
    async cancel() {
      await iterator.return(undefined);
    },
  });
  return new Response(stream, { headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no" } });
}

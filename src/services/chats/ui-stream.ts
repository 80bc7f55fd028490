import type { UIMessageChunk } from "ai";
import type { ServiceContext } from "../../contracts/context";
import { badRequest } from "../../lib/errors";
import { config } from "../../lib/config";
import { authorizeChat } from "./access";
import { commandForChat, type SendMessageInput } from "./create";
import { streamTurn } from "./session";
import { turnEvents } from "./turn-events";
import { UiChunkMapper } from "./ui-chunks";

/** A message as `useChat` sends it (UIMessage): its parts, of which text parts are read. */
export interface UiMessageInput {
  role: string;
  parts: Array<{ type: string; text?: string }>;
}

/** What POST /chats/:id/ui-stream reads: the `useChat` body, and the turn options of POST /chats/:id/messages (all optional). */
export type UiStreamInput = Omit<SendMessageInput, "content" | "model" | "agent_mode"> & {
  messages: UiMessageInput[];
  trigger?: "submit-message" | "regenerate-message";
  model?: string;
  agent_mode?: SendMessageInput["agent_mode"];
};

/**
 * The question of a `useChat` request: the text of the last message, which must be the user's.
 * The chat's history is the one the service holds, so earlier messages of the body are not read;
 * a regenerate request asks its last user message again as a new turn.
 */
export function questionOf(messages: UiMessageInput[]): string {
  const i = messages.length - 1;
  const last = messages[i]!;
  const file = last.parts.findIndex((p) => p.type === "file");
  if (file >= 0) {
    throw badRequest("Files are not read on this route; send images with POST /chats", [{ path: `body.messages.${i}.parts.${file}`, message: "Only text parts" }]);
  }
  const text = last.parts
    .filter((p) => p.type === "text")
    .map((p) => p.text ?? "")
    .join("\n")
    .trim();
  if (last.role !== "user" || !text) {
    throw badRequest("The last message must be a user message with text: it is the question", [{ path: `body.messages.${i}`, message: "Expected the user's message" }]);
  }
  return text;
}

/**
 * POST /chats/:id/ui-stream: a turn of the chat, like POST /chats/:id/messages/stream (same checks,
 * metering, single active stream per chat, stop and partial-save rules), answered in the AI SDK UI
 * message stream protocol. The model and mode default to the chat's. Leaving (useChat's `stop()`)
 * cancels the turn's stream, which the chat's Durable Object takes as a disconnect: the turn stops
 * and saves its partial answer.
 */
export async function uiStreamTurn(ctx: ServiceContext, chatId: string, body: UiStreamInput): Promise<Response> {
  const content = questionOf(body.messages);
  const { chat } = await authorizeChat(ctx, chatId, body.external_subject_id);
  const cmd = await commandForChat(ctx, chat, { ...body, content, model: body.model ?? chat.model, agent_mode: body.agent_mode ?? chat.agentMode });
  const res = await streamTurn(ctx.env, cmd);
  const { createUIMessageStreamResponse } = await import("ai");
  return createUIMessageStreamResponse({ stream: uiChunksOf(res.body!), keepAliveMs: config(ctx.env).sseHeartbeatMs });
}

/** The turn's SSE as a pull stream of UI chunks: cancelling it cancels the turn's stream. */
function uiChunksOf(body: ReadableStream<Uint8Array>): ReadableStream<UIMessageChunk> {
  const events = turnEvents(body);
  const mapper = new UiChunkMapper();
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      for (;;) {
        const next = mapper.ended ? { done: true as const, value: undefined } : await events.next().catch(() => ({ done: true as const, value: undefined }));
        const out = next.done ? (mapper.ended ? [] : mapper.broken()) : mapper.map(next.value);
        for (const chunk of out) controller.enqueue(chunk);
        if (next.done || mapper.ended) {
          await events.return(undefined);
          return controller.close();
        }
        if (out.length) return;
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
}

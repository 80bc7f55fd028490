import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { extraErrors, jsonBody, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { createChatWithFirstTurn, sendCommand } from "../../services/chats/create";
import { answeredOrThrow, runTurnJson, streamTurn } from "../../services/chats/session";
import { ChatSchema, CreateChatBody, SendMessageBody, TurnResponseSchema } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Chats"]);

export const chatTurnRoutes = createRouter();

const create = route("post", "/chats", "query:rag", {
  operationId: "createChat", summary: "Create a chat, optionally with its first message",
  description:
    "`id` is a client-generated UUID (409 if already used — except by the same create sent again, by the same " +
    "caller with the same first `message`: that answers 201 with the chat and its first turn, header " +
    "`Idempotent-Replayed: true`). With `message`, the first turn is answered and the " +
    "response carries it; without, an empty chat is created (no credits needed). `shared_source_chat_id` seeds the " +
    "new private chat with up to 120 share-safe messages of a chat you can read.",
  request: { body: jsonBody(CreateChatBody) },
  responses: {
    201: jsonContent(
      z.object({
        chat: ChatSchema,
        user_message: TurnResponseSchema.shape.user_message.optional(),
        assistant_message: TurnResponseSchema.shape.assistant_message.optional(),
        usage: TurnResponseSchema.shape.usage.optional(),
      }),
      "The chat (and the first turn)",
    ),
    ...extraErrors(402, 502),
  },
});
chatTurnRoutes.openapi(create, async (c) => {
  const { body, replayed } = await createChatWithFirstTurn(ctxOf(c), c.req.valid("json"));
  if (replayed) c.header("Idempotent-Replayed", "true");
  return c.json(body, 201);
});

const send = route("post", "/chats/{id}/messages", "query:rag", {
  operationId: "sendChatMessage", summary: "Send a message and get the complete answer",
  request: { body: jsonBody(SendMessageBody) },
  responses: {
    200: jsonContent(TurnResponseSchema, "The user message, the answer and the turn's usage"),
    ...extraErrors(402, 502),
  },
});
chatTurnRoutes.openapi(send, async (c) => {
  const outcome = answeredOrThrow(await runTurnJson(c.env, await sendCommand(ctxOf(c), c.req.valid("param").id, c.req.valid("json"))));
  return c.json({ user_message: outcome.user_message, assistant_message: outcome.assistant_message, usage: outcome.usage }, 200);
});

const stream = route("post", "/chats/{id}/messages/stream", "query:rag", {
  operationId: "streamChatMessage", summary: "Send a message and stream the answer as Server-Sent Events",
  description:
    "Each event is `data: <json>` with a `type`: user_message, agent_thought, todo_update, sources, final_response " +
    "(partial with isComplete false, then one with isComplete true and the whole answer), tokens, done; error ends " +
    "the stream. Heartbeats are `event: ping`. A new stream on the same chat replaces the running one.",
  request: { body: jsonBody(SendMessageBody) },
  responses: {
    200: { description: "text/event-stream", content: { "text/event-stream": { schema: z.string() } } },
    ...extraErrors(402),
  },
});
chatTurnRoutes.openapi(stream, async (c) => {
  const cmd = await sendCommand(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
  // The Durable Object's SSE response is passed through as is, so a client
  // disconnect reaches the DO (request.signal) and aborts generation.
  return streamTurn(c.env, cmd) as unknown as ReturnType<typeof c.json>;
});

import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { extraErrors, jsonBody } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { uiStreamTurn } from "../../services/chats/ui-stream";
import { routesTagged } from "../define-route";
import { UiStreamBody } from "./schemas";

const route = routesTagged(["Chats"]);

export const chatUiStreamRoutes = createRouter();

const uiStream = route("post", "/chats/{id}/ui-stream", "query:rag", {
  operationId: "streamChatMessageUi",
  summary: "Send a message and stream the answer in the AI SDK UI message stream protocol (useChat)",
  description:
    "For the AI SDK's `useChat` with a `DefaultChatTransport` pointed here (API key or embed token in its headers). " +
    "Takes useChat's body (`{id, messages, trigger, messageId}`); the last message is the question and the chat keeps " +
    "its own history. Answers `x-vercel-ai-ui-message-stream: v1` SSE: `start`, the answer as text parts citing [n], " +
    "each source as `source-url` or `source-document` (`sourceId` = n), tool activity as `data-thought`, `data-todo`, " +
    "`data-tool`, `data-preview`, `data-chart`, then `finish` (message id, usage) or `error`. One active stream per " +
    "chat (a new one replaces it), POST /chats/{id}/stop and disconnects stop the turn and keep its partial answer.",
  request: { body: jsonBody(UiStreamBody) },
  responses: {
    200: { description: "text/event-stream (AI SDK UI message stream v1)", content: { "text/event-stream": { schema: z.string() } } },
    ...extraErrors(402),
  },
});
chatUiStreamRoutes.openapi(uiStream, async (c) => {
  // The stream is its own Response; the typed-response check does not apply.
  return (await uiStreamTurn(ctxOf(c), c.req.valid("param").id, c.req.valid("json"))) as never;
});

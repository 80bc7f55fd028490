import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import type { Context } from "hono";
import { optionalCaller } from "../../auth/authorize";
import { notFound } from "../../lib/errors";
import { jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { getChat } from "../../services/chats/chats";
import { serveChatImage } from "../../services/chats/images";
import { sharedTranscript } from "../../services/chats/sharing";
import { resolveSession, SESSION_COOKIE } from "../../services/identity/sessions";
import { getCookie } from "hono/cookie";
import type { AppEnv } from "../../types";
import { SourceSchema } from "./schemas";
import { renderSharePage, SHARE_PAGE_HEADERS } from "./share-page";
import { routesTagged } from "../define-route";

const route = routesTagged(["Chats"]);

const TranscriptSchema = z
  .object({
    chat: z.object({
      id: z.string(),
      title: z.string().nullable(),
      knowledgeBaseId: z.string(),
      knowledgeBaseName: z.string().nullable(),
      accessLevel: z.enum(["private", "org", "public"]),
      transcriptTruncated: z.boolean(),
    }),
    messages: z.array(
      z.object({
        role: z.enum(["user", "assistant"]),
        content: z.string(),
        metadata: z
          .object({
            sources: z.array(SourceSchema).optional(),
            memoryUsed: z.boolean().optional(),
            delegatedAgentIds: z.array(z.string()).optional(),
            imageUrls: z.array(z.string()).optional(),
          })
          .optional(),
      }),
    ),
  })
  .openapi("SharedTranscript");

const shared = route("get", "/shared-chats/{id}", "public", {
  operationId: "getSharedChat", summary: "Read-only, sanitized transcript of a shared chat",
  description:
    "`public`: anyone. `org`: a signed-in member of the owning organization. `private` (or not allowed): 404. " +
    "At most the 200 most recent messages; `transcriptTruncated` says when older ones are omitted.",
  responses: { 200: jsonContent(TranscriptSchema, "The transcript") },
  security: [{}, { sessionCookie: [] }] as Array<Record<string, string[]>>,
});

export const sharedChatRoutes = createRouter().openapi(shared, async (c) => {
  // API keys are not members of anything: only a user session can unlock `org` chats.
  const transcript = await sharedTranscript(ctxOf(c), c.req.valid("param").id, optionalCaller(ctxOf(c)));
  if (!transcript) throw notFound("Chat");
  return c.json(transcript, 200);
});

/** Images of chat messages: PUBLIC_BASE_URL/chat-images/:chatId/:file (capability URLs). */
export async function chatImage(c: Context<AppEnv>) {
  const chat = await getChat(c.get("db"), (c.req.param("chatId") ?? "").toLowerCase());
  return (await serveChatImage(ctxOf(c), chat, c.req.param("file") ?? "")) ?? c.notFound();
}

/** The HTML page behind share URLs (PUBLIC_BASE_URL/share/:chatId), served by the root app. */
export async function sharePage(c: Context<AppEnv>) {
  const token = getCookie(c, SESSION_COOKIE);
  const session = token ? await resolveSession(c.get("db"), token) : null;
  const caller = session ? { type: "user" as const, user: session.user, sessionId: session.sessionId } : null;
  const transcript = await sharedTranscript(ctxOf(c), c.req.param("chatId") ?? "", caller);
  if (!transcript) return c.html(renderSharePage(null), 404, SHARE_PAGE_HEADERS);
  return c.html(renderSharePage(transcript), 200, { ...SHARE_PAGE_HEADERS, "Cache-Control": "private, no-store" });
}

import type { Context } from "hono";
import { forbidden } from "../lib/errors";
import type { AppEnv } from "../types";
import type { KeyCaller } from "../contracts/caller";

/**
 * Where an embed token (`Bearer kbe_...`) is accepted: the chat routes a widget needs, and only those
 * (API-DECISIONS "Embedding the chat": create, send, stream — also as the AI SDK UI message stream —, stop,
 * messages, follow-up questions).
 * Paths are relative to /api/v1. Everything else answers 403 before any lookup.
 */
export const EMBED_ROUTES: readonly { method: string; path: RegExp }[] = [
  { method: "POST", path: /^\/chats$/ }, // create a chat
  { method: "POST", path: /^\/chats\/[^/]+\/messages$/ }, // send
  { method: "POST", path: /^\/chats\/[^/]+\/messages\/stream$/ }, // stream
  { method: "POST", path: /^\/chats\/[^/]+\/ui-stream$/ }, // stream for the AI SDK's useChat
  { method: "POST", path: /^\/chats\/[^/]+\/stop$/ }, // stop
  { method: "GET", path: /^\/chats\/[^/]+\/messages$/ }, // list messages
  { method: "POST", path: /^\/chats\/follow-up-questions$/ }, // follow-up questions
];

export function isEmbedRoute(method: string, pathname: string): boolean {
  const path = pathname.replace(/^\/api\/v1(?=\/)/, "");
  return EMBED_ROUTES.some((r) => r.method === method && r.path.test(path));
}

/**
 * The request's origin as the browser states it. Browsers send `Origin` on every cross-origin request
 * and on same-origin POSTs, but not on same-origin GETs; for those, `Sec-Fetch-Site: same-origin` (a
 * header pages cannot set) stands for the service's own origin. Non-browser clients can send anything,
 * which is why tokens are short-lived: the origin list stops other sites' pages, not a stolen token.
 */
export function requestOrigin(c: Context<AppEnv>): string | null {
  const origin = c.req.header("Origin");
  if (origin && origin !== "null") return origin;
  if (!origin && c.req.header("Sec-Fetch-Site") === "same-origin") return new URL(c.req.url).origin;
  return null;
}

/** 403 unless the route is one of EMBED_ROUTES and the request comes from one of the token's origins. */
export function assertEmbedRequestAllowed(c: Context<AppEnv>, caller: KeyCaller) {
  if (!caller.embed) return;
  if (!isEmbedRoute(c.req.method, c.req.path)) {
    throw forbidden("An embed token can only create and use chats (create, send, stream, stop, messages, follow-up questions)");
  }
  const origin = requestOrigin(c);
  if (!origin || !caller.embed.allowedOrigins.includes(origin)) {
    throw forbidden("This embed token is not valid from this origin");
  }
}

import type { MiddlewareHandler } from "hono";
import { BOOKMARK_HEADER, finalBookmark, openSessionDb, trackRequestSession } from "../db/session";
import type { AppEnv } from "../types";

/** The request's database (c.var.db) as a session from the caller's bookmark; the response says where it ended. */
export const requestSession: MiddlewareHandler<AppEnv> = async (c, next) => {
  const session = openSessionDb(c.env, c.req.header(BOOKMARK_HEADER));
  c.set("db", session.db);
  trackRequestSession(session);
  await next();
  const bookmark = finalBookmark(session);
  // A response passed through from a chat's Durable Object may carry a later bookmark (its turn's writes): kept.
  if (!bookmark || c.res.headers.has(BOOKMARK_HEADER)) return;
  try {
    c.res.headers.set(BOOKMARK_HEADER, bookmark);
  } catch {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(BOOKMARK_HEADER, bookmark);
  }
};


import { createDb, type Database } from "./client";
import { withSimulatedDistance, type SimulatedDb } from "./distance";
import { withRiders } from "./rider";

/**
 * D1 read replication through the Sessions API (README "Latency"). Every request and every chat turn runs in a D1
 * session: its reads may be served by a replica near the Worker, and each read sees every write made before it in
 * the session. Where a session starts:
 *   - a valid `X-D1-Bookmark` request header (the value a previous response returned): any replica that has
 *     caught up with it, so a caller reads its own writes without a trip to the primary;
 *   - otherwise the primary (`first-primary`): the first read sees everything written before it, as without
 *     replication; later reads in the request may come from replicas at least that recent.
 * Every API response carries `X-D1-Bookmark` (the session's position after the request); a chat turn's `done`
 * event carries `d1_bookmark` (after the answer's final write).
 */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

/** D1 bookmarks look like `00000000-0000000d-00000000-00000000000000000000000000000000`; anything else starts at the primary. */
const BOOKMARK_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/i;

export function validBookmark(value: string | null | undefined): string | null {
  return value && value.length <= 100 && BOOKMARK_SHAPE.test(value) ? value : null;
}

export interface SessionDb {
  db: Database;
  /** Where the session is now (null before its first query when it started at the primary). */
  bookmark(): string | null;
}

/** A D1 session (with the benchmark's simulated distance when configured), starting at `bookmark` or the primary. */
export function openSessionDb(env: SimulatedDb, bookmark?: string | null): SessionDb {
  const session = typeof env.DB.withSession === "function" ? env.DB.withSession(validBookmark(bookmark) ?? "first-primary") : null;
  // Riders (a cached caller's re-read, src/db/rider.ts) go along with the request's first statements.
  if (!session) return { db: createDb(withRiders(withSimulatedDistance(env.DB, env.SIMULATED_D1_RTT_MS, env.SIMULATED_HOPS_TRACE))), bookmark: () => null };
  // drizzle takes the session at runtime; the cast is for the types (STACK-WAVE3 §5).
  const db = createDb(withRiders(withSimulatedDistance(session as unknown as D1Database, env.SIMULATED_D1_RTT_MS, env.SIMULATED_HOPS_TRACE)));
  return { db, bookmark: () => session.getBookmark() };
}

// Keyed by the request's database handle: one per request (services see it as ServiceContext.db).
const sessions = new WeakMap<object, SessionDb>();
/** A later position than the request's own session: where a chat turn's Durable Object ended (its JSON answer). */
const laterBookmarks = new WeakMap<object, string>();
/** On a turn command: the request's database handle (a symbol: copied by `{ ...cmd }`, never sent to the object). */
const REQUEST_DB = Symbol("request db");

/** Registers a request's session (the middleware in src/routes/d1-session.ts). */
export function trackRequestSession(session: SessionDb): void {
  sessions.set(session.db, session);
}

/** Where the request's session ended: a turn's later bookmark (its JSON answer), else the session's own. */
export function finalBookmark(session: SessionDb): string | null {
  return laterBookmarks.get(session.db) ?? session.bookmark();
}

/** Where the request's session (of its database handle) is now: a turn's Durable Object starts its own session there. */
export function requestBookmark(db: Database): string | null {
  return sessions.get(db)?.bookmark() ?? null;
}

/** The request (its database handle) a turn command was made for: the turn's bookmark becomes the request's. */
export function linkTurnToRequest(cmd: object, db: Database): void {
  (cmd as { [REQUEST_DB]?: Database })[REQUEST_DB] = db;
}

/** The bookmark a turn's Durable Object answered with (after the turn's final write). */
export function adoptTurnBookmark(cmd: object, bookmark: string | null): void {
  const db = (cmd as { [REQUEST_DB]?: Database })[REQUEST_DB];
  const b = validBookmark(bookmark);
  if (db && b) laterBookmarks.set(db, b);
}

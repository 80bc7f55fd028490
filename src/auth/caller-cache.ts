import { sha256Hex } from "../lib/crypto";
import { ApiError } from "../lib/errors";
import { apiKeyLookup, keyCallerOf, KEY_PREFIX } from "../services/api-keys";
import { rideAlong } from "../db/rider";
import { resolveSession, type ResolvedSession } from "../services/identity/sessions";
import type { Database } from "../db/client";
import { trackCallerCheck } from "./caller-check";
import type { Caller, KeyCaller, UserCaller } from "../contracts/caller";

/**
 * API keys and session cookies resolved in this isolate, so a request does not wait for its key's lookup before its own first query
 * (README "Latency"). A cached key is never trusted on its own: every request still re-reads the key (revoked,
 * expired, its creator's role, its organization's status) — but with the route's own first query instead of
 * before it (a key's re-read in the route's first batch when it starts with one, src/db/rider.ts) — and the authorization layer (`authorize`) waits for that read before it decides
 * anything. A revoked key, a removed or demoted creator, a suspended organization are therefore refused by the
 * very next request's authorization, in every isolate; the bound is the database's own (with read replication,
 * a replica's lag; the Sessions API keeps a caller's own writes visible to it). A route that never authorizes
 * still answers 401 when the re-read fails (checked after the handler, `settleCallerCheck`).
 */
const TTL_MS = 5 * 60_000;
const MAX_ENTRIES = 2_000;
const keys = new Map<string, { caller: KeyCaller; at: number }>();
/** What the lookups need from the request: its database, `waitUntil`, and how to adopt a re-read caller. */
export interface CallerRequest {
  db: Database;
  waitUntil(promise: Promise<unknown>): void;
  adopt(caller: Caller): void;
}

const sessionUsers = new Map<string, { caller: UserCaller; at: number }>();

/**
 * The user of a session cookie, or null for an unknown or expired one: from this isolate's cache (re-read
 * alongside; `onRefresh` runs when the re-read slid the session's expiry), or looked up now.
 */
export async function sessionCaller(c: CallerRequest, token: string, onRefresh: () => void): Promise<UserCaller | null> {
  if (token.length < 20 || token.length > 200) return null;
  const hash = await sha256Hex(token);
  const asCaller = (s: ResolvedSession): UserCaller => ({ type: "user", user: s.user, sessionId: s.sessionId });
  const fresh = resolveSession(c.db, token, hash).then((s) => {
    if (!s) {
      sessionUsers.delete(hash);
      return null;
    }
    const caller = asCaller(s);
    remember(sessionUsers, hash, caller);
    if (s.refreshedExpiresAt) onRefresh();
    return caller;
  });
  const hit = sessionUsers.get(hash);
  if (!hit || Date.now() - hit.at > TTL_MS) return fresh;
  const check = fresh.then((caller) => {
    if (!caller) throw new ApiError("unauthorized", "Your session has ended; sign in again");
    return caller;
  });
  trackCallerCheck(c.db, check, c.adopt);
  return { ...hit.caller }; // one object per request: per-request memberships (authorize.ts) hang off it
}

/**
 * The caller of an API key: from this isolate's cache, or looked up now. A cached key's re-read rides along the
 * request's first query (in its first batch, one D1 call for both: src/db/rider.ts).
 */
export async function keyCaller(c: CallerRequest, token: string): Promise<KeyCaller> {
  if (!token.startsWith(KEY_PREFIX) || token.length > 200) throw new ApiError("unauthorized", "Invalid API key");
  const hash = await sha256Hex(token);
  const hit = keys.get(hash);
  const cached = !!hit && Date.now() - hit.at <= TTL_MS;
  const lookup = apiKeyLookup(c.db, hash);
  const riding = cached ? rideAlong(c.db, lookup) : null;
  const fresh = Promise.resolve(riding ? riding.result : lookup).then(
    (rows) => {
      const { caller, touch } = keyCallerOf(c.db, rows[0]);
      if (touch) c.waitUntil(touch.catch((e) => console.error("last_used_at update failed", e)));
      remember(keys, hash, caller);
      return caller;
    },
    (e: unknown) => {
      keys.delete(hash);
      throw e;
    },
  );
  if (!riding) return fresh;
  trackCallerCheck(c.db, fresh, c.adopt, riding.send);
  return { ...hit!.caller };
}

function remember<T>(cache: Map<string, { caller: T; at: number }>, hash: string, caller: T) {
  cache.delete(hash);
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(hash, { caller, at: Date.now() });
}

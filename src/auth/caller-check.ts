import type { Caller } from "../contracts/caller";

/**
 * The re-read of a cached caller (src/auth/caller-cache.ts) in flight for a request, keyed by the request's
 * database handle — one per request (src/db/session.ts), held by the middleware and by every service
 * (ServiceContext.db). The authorization layer waits for it before deciding anything (`verifiedCaller`).
 */
const pending = new WeakMap<object, { check: Promise<Caller>; adopt: (caller: Caller) => void; send?: () => void }>();

/**
 * Registers a request's re-read; `adopt` makes the fresh caller the request's. `send`: the re-read waits to ride
 * along the request's first query (src/db/rider.ts), and this sends it at once (before anything is decided).
 */
export function trackCallerCheck(db: object, check: Promise<Caller>, adopt: (caller: Caller) => void, send?: () => void): void {
  check.catch(() => {}); // observed by verifiedCaller / settleCallerCheck
  pending.set(db, { check, adopt, send });
}

/**
 * The request's caller once its re-read is in (it replaces the cached one: scopes, roles and the organization's
 * status as they are now). Throws the re-read's 401 for a key or session that no longer works.
 */
export async function verifiedCaller(ctx: { readonly db: object; readonly caller: Caller | null }): Promise<Caller | null> {
  const entry = pending.get(ctx.db);
  if (!entry) return ctx.caller ?? null;
  entry.send?.();
  const caller = await entry.check;
  pending.delete(ctx.db);
  entry.adopt(caller);
  return caller;
}

/** After the handler: a re-read that failed (and was never awaited) still turns the answer into its 401. */
export async function settleCallerCheck(db: object, caller: Caller | null): Promise<void> {
  if (pending.has(db)) await verifiedCaller({ db, caller });
}

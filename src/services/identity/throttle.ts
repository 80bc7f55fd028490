import { and, count, eq, gt, lt, max as maxOf, min } from "drizzle-orm";
import type { Database } from "../../db/client";
import { authThrottle } from "../../db/schema";
import { ApiError } from "../../lib/errors";

type Kind = "login_failure" | "signup" | "oauth_register";

/**
 * Fixed-window throttling backed by D1: counts events of `kind` for `subject`
 * in the last `windowSeconds`. `max` of 0 disables the check.
 */
export async function assertNotThrottled(
  db: Database,
  kind: Kind,
  subject: string,
  max: number,
  windowSeconds: number,
  message: string,
): Promise<void> {
  if (max <= 0) return;
  const since = new Date(Date.now() - windowSeconds * 1000).toISOString();
  const row = await db
    .select({ n: count(), oldest: min(authThrottle.createdAt) })
    .from(authThrottle)
    .where(and(eq(authThrottle.kind, kind), eq(authThrottle.subject, subject), gt(authThrottle.createdAt, since)))
    .get();
  if ((row?.n ?? 0) >= max) {
    // The window frees up when its oldest event ages out.
    const freeAt = row?.oldest ? Date.parse(row.oldest) + windowSeconds * 1000 : Date.now() + windowSeconds * 1000;
    const retryAfter = Math.max(1, Math.ceil((freeAt - Date.now()) / 1000));
    throw new ApiError("rate_limited", message, { headers: { "Retry-After": String(retryAfter) } });
  }
}

/** How many events of `kind` for `subject` in the last `windowSeconds`, and when the newest was. */
export async function recentEvents(db: Database, kind: Kind, subject: string, windowSeconds: number): Promise<{ count: number; newest: string | null }> {
  const since = new Date(Date.now() - windowSeconds * 1000).toISOString();
  const row = await db
    .select({ n: count(), newest: maxOf(authThrottle.createdAt) })
    .from(authThrottle)
    .where(and(eq(authThrottle.kind, kind), eq(authThrottle.subject, subject), gt(authThrottle.createdAt, since)))
    .get();
  return { count: row?.n ?? 0, newest: row?.newest ?? null };
}

export async function recordThrottleEvent(db: Database, kind: Kind, subject: string): Promise<void> {
  await db.insert(authThrottle).values({ kind, subject, createdAt: new Date().toISOString() });
}

export async function clearThrottle(db: Database, kind: Kind, subject: string): Promise<void> {
  await db.delete(authThrottle).where(and(eq(authThrottle.kind, kind), eq(authThrottle.subject, subject)));
}

/** Housekeeping: forget events older than a day (longer than any window). */
export async function purgeThrottleEvents(db: Database): Promise<void> {
  const before = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
  await db.delete(authThrottle).where(lt(authThrottle.createdAt, before));
}

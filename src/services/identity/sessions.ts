import { and, eq, gt, lt } from "drizzle-orm";
import type { Database } from "../../db/client";
import { sessions, users, type User } from "../../db/schema";
import { randomToken, sha256Hex } from "../../lib/crypto";
import { newId } from "../../lib/ids";
import { DAY_MS, isoIn, nowIso } from "../../lib/time";

export const SESSION_COOKIE = "kb_session";
export const SESSION_TTL_MS = 30 * DAY_MS;
/** Sliding expiry is extended at most once a day, so reads do not write on every request. */
const REFRESH_AFTER_MS = DAY_MS;

export async function createSession(
  db: Database,
  userId: string,
  meta: { userAgent?: string | null; ip?: string | null },
): Promise<{ token: string; expiresAt: string }> {
  // 256-bit opaque token; only its hash is stored, so a database leak yields no usable sessions.
  const token = randomToken(32);
  const now = nowIso();
  const expiresAt = isoIn(SESSION_TTL_MS);
  await db.insert(sessions).values({
    id: newId("ses"),
    userId,
    tokenHash: await sha256Hex(token),
    createdAt: now,
    lastSeenAt: now,
    expiresAt,
    userAgent: meta.userAgent?.slice(0, 512) ?? null,
    ip: meta.ip ?? null,
  });
  return { token, expiresAt };
}

export interface ResolvedSession {
  sessionId: string;
  user: User;
  /** Set when the sliding expiry moved: the cookie must be re-sent. */
  refreshedExpiresAt?: string;
}

export async function resolveSession(db: Database, token: string, tokenHash?: string): Promise<ResolvedSession | null> {
  if (token.length < 20 || token.length > 200) return null;
  const hash = tokenHash ?? (await sha256Hex(token));
  const now = nowIso();
  const row = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hash), gt(sessions.expiresAt, now)))
    .get();
  if (!row) return null;
  const result: ResolvedSession = { sessionId: row.session.id, user: row.user };
  if (Date.now() - Date.parse(row.session.lastSeenAt) > REFRESH_AFTER_MS) {
    const expiresAt = isoIn(SESSION_TTL_MS);
    await db.update(sessions).set({ lastSeenAt: now, expiresAt }).where(eq(sessions.id, row.session.id));
    result.refreshedExpiresAt = expiresAt;
  }
  return result;
}

export async function revokeSession(db: Database, sessionId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, sessionId));
}

export async function purgeExpiredSessions(db: Database): Promise<void> {
  await db.delete(sessions).where(lt(sessions.expiresAt, nowIso()));
}

import { isUniqueViolation } from "../../db/errors";
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { users, type User } from "../../db/schema";
import { hashPassword, verifyPassword } from "../../lib/crypto";
import { ApiError, conflict } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export function publicUser(u: User) {
  return { id: u.id, email: u.email, name: u.name, created_at: u.createdAt };
}

export async function createUser(
  db: Database,
  input: { email: string; password: string; name?: string | null },
  iterations: number,
): Promise<User> {
  const email = normalizeEmail(input.email);
  const existing = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).get();
  if (existing) throw conflict("email_taken", "An account with this email already exists");
  const pw = await hashPassword(input.password, iterations);
  const now = nowIso();
  const user: User = {
    id: newId("usr"),
    email,
    name: input.name ?? null,
    passwordHash: pw.hash,
    passwordSalt: pw.salt,
    passwordIterations: pw.iterations,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await db.insert(users).values(user);
  } catch (e) {
    // Two signups racing for one email: the unique index decides.
    if (isUniqueViolation(e)) throw conflict("email_taken", "An account with this email already exists");
    throw e;
  }
  return user;
}

// A fixed hash to verify against when the email is unknown, so that response
// time does not reveal whether an account exists.
let dummyHash: Promise<Awaited<ReturnType<typeof hashPassword>>> | null = null;

export async function authenticateUser(db: Database, email: string, password: string): Promise<User> {
  const user = await db.select().from(users).where(eq(users.email, normalizeEmail(email))).get();
  if (!user) {
    dummyHash ??= hashPassword("not-a-real-password");
    await verifyPassword(password, await dummyHash);
    throw new ApiError("unauthorized", "Invalid email or password");
  }
  const ok = await verifyPassword(password, {
    hash: user.passwordHash,
    salt: user.passwordSalt,
    iterations: user.passwordIterations,
  });
  if (!ok) throw new ApiError("unauthorized", "Invalid email or password");
  return user;
}

/**
 * Whether an error from D1 (possibly wrapped by drizzle as "Failed query",
 * with the driver error in `cause`) is a UNIQUE constraint violation.
 */
export function isUniqueViolation(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; depth++) {
    const msg = cur instanceof Error ? cur.message : String(cur);
    if (/UNIQUE constraint failed/i.test(msg)) return true;
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return false;
}

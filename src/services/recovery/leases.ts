/**
 * Leases (README "Crash safety"). Work in flight — a document being queued or processed, an agent run, a chat
 * turn — holds a lease that expires LEASE_MS after it was last renewed; the worker doing it renews it every
 * HEARTBEAT_MS. A lease that lapsed means the worker is gone (a crash, a restart, a reset Durable Object): the
 * supervisor (./supervisor.ts) re-drives the work. A worker that is merely slow keeps renewing and is left alone.
 */
export const LEASE_MS = 30_000;
export const HEARTBEAT_MS = 10_000;

/** An upload streaming into R2 holds its document this long after its last bytes arrived. */
export const UPLOAD_LEASE_MS = 15_000;
export const UPLOAD_HEARTBEAT_MS = 5_000;

/** A deletion's leftovers are looked at this soon by the supervisor (the request's own background cleanup usually wins). */
export const CLEANUP_CHECK_MS = 2_000;

/** The expiry of a lease taken (or renewed) at `now`, starting `delayMs` later (a message delivered after a delay). */
export const leaseUntil = (now = Date.now(), delayMs = 0): string => new Date(now + delayMs + LEASE_MS).toISOString();

/** When the supervisor should look at a lease again: just after it would lapse. */
export const checkAfter = (leaseExpiresAt: string | number): number =>
  (typeof leaseExpiresAt === "number" ? leaseExpiresAt : Date.parse(leaseExpiresAt)) + 1_000;

/**
 * Runs `beat` every `everyMs` until the returned stop function is called. A beat that fails is logged (the lease
 * then lapses and the supervisor takes over, which is the safe outcome); beats never overlap.
 */
export function heartbeat(what: string, everyMs: number, beat: () => Promise<unknown>): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    beat()
      .catch((e) => console.warn(`heartbeat of ${what} failed:`, e instanceof Error ? e.message : e))
      .finally(() => (running = false));
  }, everyMs);
  return () => clearInterval(timer);
}

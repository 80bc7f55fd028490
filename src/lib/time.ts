/** Timestamps are stored as ISO 8601 UTC strings (sortable, readable in SQL). */
export const nowIso = () => new Date().toISOString();
export const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString();

export const DAY_MS = 24 * 60 * 60 * 1000;

/** The calendar month (UTC) containing `at`: the billing period. */
export function monthPeriod(at = new Date()): { start: string; end: string } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start: start.toISOString(), end: end.toISOString() };
}

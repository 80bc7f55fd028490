import { Cron } from "croner";
import type { AgentScheduleConfig } from "../../db/schema";
import { badRequest } from "../../lib/errors";

/** A 5-field cron expression (minute hour day-of-month month day-of-week) with an IANA time zone. */

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function cronOf(expr: string, timezone: string) {
  return new Cron(expr, { timezone, paused: true, mode: "5-part" });
}

/** Validates and normalizes a schedule (string or object); 400 naming the field. */
export function parseSchedule(
  input: string | { cron: string; timezone?: string; enabled?: boolean; message?: string | null } | null | undefined,
  path = "body.schedule",
): AgentScheduleConfig | null {
  if (input === undefined || input === null) return null;
  const obj = typeof input === "string" ? { cron: input } : input;
  const cron = obj.cron.trim().replace(/\s+/g, " ");
  const timezone = obj.timezone ?? "UTC";
  const cronPath = typeof input === "string" ? path : `${path}.cron`;
  if (cron.split(" ").length !== 5) {
    throw badRequest("The schedule must be a 5-field cron expression (minute hour day-of-month month day-of-week)", [
      { path: cronPath, message: "Expected 5 fields" },
    ]);
  }
  if (!isValidTimezone(timezone)) {
    throw badRequest(`Unknown time zone '${timezone}'; use an IANA name such as Europe/Berlin`, [
      { path: `${path}.timezone`, message: "Not an IANA time zone" },
    ]);
  }
  try {
    const next = cronOf(cron, timezone).nextRun();
    if (!next) throw new Error("the expression never fires");
  } catch (e) {
    throw badRequest(`Invalid cron expression: ${(e as Error).message}`, [{ path: cronPath, message: "Invalid cron expression" }]);
  }
  return { cron, timezone, enabled: obj.enabled ?? true, message: obj.message ?? null };
}

/** The first occurrence strictly after `after`. */
export function nextOccurrence(cron: string, timezone: string, after: Date): Date | null {
  return cronOf(cron, timezone).nextRun(after);
}

/** The latest occurrence at or before `at` (null when none). */
export function previousOccurrence(cron: string, timezone: string, at: Date): Date | null {
  // nextRun is strictly after its argument: step back one ms so `at` itself counts.
  const prev = cronOf(cron, timezone).previousRuns(1, new Date(at.getTime() + 1));
  return prev[0] ?? null;
}

/** The latest `n` occurrences at or before `at`, newest first. */
export function previousOccurrences(cron: string, timezone: string, at: Date, n: number): Date[] {
  return cronOf(cron, timezone).previousRuns(n, new Date(at.getTime() + 1));
}

/** The time between an occurrence and the next one (the "period" of a missed occurrence). */
export function periodAfter(cron: string, timezone: string, occurrence: Date): number {
  const next = nextOccurrence(cron, timezone, occurrence);
  return next ? next.getTime() - occurrence.getTime() : Infinity;
}

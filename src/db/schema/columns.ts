import { text } from "drizzle-orm/sqlite-core";

/**
 * Shared column helpers. Timestamps are ISO-8601 strings written by the
 * services (lib/time.ts `nowIso()`), never SQL defaults, so a row's times come
 * from one clock.
 */
export const timestamps = () => ({
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** For append-only rows (no `updated_at`). */
export const createdAt = () => text("created_at").notNull();

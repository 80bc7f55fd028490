import type { Database } from "../db/client";
import type { Env } from "../env";

/**
 * Deleting an organization, tenant or knowledge base removes its rows through
 * ON DELETE CASCADE. Anything outside D1 (stored files, vectors) is cleaned up
 * by hooks that capabilities register here; they run before the rows go, while
 * the ids are still known, and must only enqueue or do bounded work.
 */
export type CleanupKind = "organization" | "tenant" | "knowledge_base";
type Hook = (ctx: { db: Database; env: Env; waitUntil: (p: Promise<unknown>) => void }, id: string) => Promise<void>;

const hooks: Record<CleanupKind, Hook[]> = { organization: [], tenant: [], knowledge_base: [] };

export function registerCleanup(kind: CleanupKind, hook: Hook): void {
  hooks[kind].push(hook);
}

export async function runCleanup(
  kind: CleanupKind,
  ctx: { db: Database; env: Env; waitUntil: (p: Promise<unknown>) => void },
  id: string,
): Promise<void> {
  for (const hook of hooks[kind]) await hook(ctx, id);
}

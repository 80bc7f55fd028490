import type { Database } from "../db/client";
import type { ServiceContext } from "../contracts/context";
import { CLEANUP_CHECK_MS } from "./recovery/leases";
import { wakeSupervisor } from "./recovery/supervisor";

/**
 * Deleting an organization, tenant or knowledge base removes its rows through
 * ON DELETE CASCADE. Anything outside D1 (stored files, vectors) is cleaned up
 * by hooks that capabilities register here; they run before the rows go, while
 * the ids are still known, and must only enqueue or do bounded work.
 */
export type CleanupKind = "organization" | "tenant" | "knowledge_base";
type Hook = (ctx: Pick<ServiceContext, "db" | "env" | "waitUntil">, id: string) => Promise<void>;

const hooks: Record<CleanupKind, Hook[]> = { organization: [], tenant: [], knowledge_base: [] };

export function registerCleanup(kind: CleanupKind, hook: Hook): void {
  hooks[kind].push(hook);
}

/**
 * Deletes an organization, tenant or knowledge base: the registered cleanups run first, while the ids
 * are still known, then `remove` deletes the row (and, by cascade, everything under it).
 */
export async function deleteWithCleanup(ctx: ServiceContext, kind: CleanupKind, id: string, remove: (db: Database) => Promise<void>): Promise<void> {
  for (const hook of hooks[kind]) await hook(ctx, id);
  await remove(ctx.db);
  // What the rows leave outside D1 was recorded by the deleting statement (triggers); the supervisor removes it
  // even if the hooks' background work is lost.
  await wakeSupervisor(ctx.env, Date.now() + CLEANUP_CHECK_MS);
}

import { claimBrowserFlow } from "../oauth-flows";
import type { ServiceContext } from "../../contracts/context";
import type { Database } from "../../db/client";
import type { McpServer } from "../../db/schema";
import type { Env } from "../../env";
import { discoverTools } from "./client";
import { parseMcpUrl } from "./guard";
import { consumeState, finishAuthorization, safeMessage } from "./oauth";
import { createMcpServer, getMcpServer, manifestIsStale } from "./servers";

/**
 * Registers an MCP server for an organization: the URL goes through the guard, credentials are
 * encrypted, and the tools are listed in the background (the registration answers at once as `pending`).
 */
export async function registerMcpServer(
  ctx: ServiceContext,
  organizationId: string,
  input: { name: string; url: string; credentials?: string | null },
  createdBy: string,
): Promise<McpServer> {
  const url = await parseMcpUrl(ctx.env, input.url);
  const db = ctx.db;
  const row = await createMcpServer(db, ctx.env, { organizationId, name: input.name, url: url.toString(), credentials: input.credentials, createdBy });
  ctx.waitUntil(discoverTools(ctx.env, db, row.id));
  return row;
}

export interface CallbackQuery {
  code?: string;
  state?: string;
  error?: string;
  error_description?: string;
}

/**
 * The browser's return from the authorization server: the signed single-use state is consumed, the
 * code exchanged, and the tools listed with the new token at once, so what the user is told is true.
 */
export async function completeMcpAuthorization(
  env: Env,
  db: Database,
  q: CallbackQuery,
  cookieOf: (name: string) => string | undefined = () => undefined,
): Promise<{ connected: boolean; message: string }> {
  if (q.error) return { connected: false, message: `The authorization server answered: ${q.error_description ?? q.error}` };
  if (!q.code || !q.state) return { connected: false, message: "The callback is missing its code or state." };
  const consumed = await consumeState(env, db, q.state);
  if ("error" in consumed) return { connected: false, message: consumed.error };
  // Only in the browser that opened the flow (the state is used up either way).
  if (!(await claimBrowserFlow(db, q.state, cookieOf)).ok) {
    return { connected: false, message: "This authorization was not started in this browser (flow_not_started_here); start it again from here." };
  }
  let name: string;
  try {
    name = (await finishAuthorization(env, db, consumed.serverId, q.code)).name;
  } catch (e) {
    return { connected: false, message: `The authorization code could not be exchanged: ${safeMessage(e)}` };
  }
  await discoverTools(env, db, consumed.serverId);
  const after = await getMcpServer(db, consumed.serverId);
  const tools =
    after?.status === "ready"
      ? `its ${after.toolCount} tool(s) are available to the organization's chats`
      : `but its tools could not be listed yet (${after?.lastError ?? "unknown error"})`;
  return { connected: true, message: `${name} is connected; ${tools}.` };
}

/** The cached tool manifest of a registration; a stale one is refreshed in the background (this answer stays the cached one). */
export function toolManifest(ctx: ServiceContext, row: McpServer) {
  if (row.status === "ready" && manifestIsStale(row)) ctx.waitUntil(discoverTools(ctx.env, ctx.db, row.id));
  return { server_id: row.id, server_name: row.name, tools: row.manifest, manifest_refreshed_at: row.manifestRefreshedAt };
}

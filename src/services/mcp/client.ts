import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Database } from "../../db/client";
import type { McpServer, McpToolManifestEntry } from "../../db/schema";
import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";
import { decryptSecret } from "../../lib/secrets";
import { assertMcpUrl, mcpFetch, type FetchObservations } from "./guard";
import { McpAuthRequired, safeMessage } from "./oauth";
import { getMcpServer, saveManifest, setMcpStatus, updateMcpServer } from "./servers";
import { freshAccessToken } from "./refresh";
import type { TurnResources } from "../../contracts/resources";

/**
 * Connecting to a registered MCP server with the SDK (loaded only here, on
 * use): Streamable HTTP first, then the older SSE transport when the server
 * answers 400/404/405 (never on 401/403). Every request goes through the URL
 * guard (`mcpFetch`). Static credentials and OAuth access tokens are sent as
 * `Authorization: Bearer`; the token refresh is ours (one at a time, see
 * ./oauth.ts), so the transports get a header, not the SDK's auth provider.
 */

export const CONNECT_TIMEOUT_MS = 15_000;
const CLIENT_INFO = { name: "kb-chat-service", version: "1.0.0" };

export interface Connection {
  client: Client;
  transport: "streamable_http" | "sse";
  close(): Promise<void>;
}

async function bearerFor(env: Env, db: Database, row: McpServer, force: boolean, signal?: AbortSignal): Promise<string | null> {
  if (row.credentialsEnc) return decryptSecret(env, row.credentialsEnc, `mcp_server:${row.id}`);
  if (row.oauthTokensEnc) return freshAccessToken(env, db, row, { force, signal });
  return null;
}

function isStatus(e: unknown, codes: number[]): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === "number" && codes.includes(code);
}

async function open(env: Env, row: McpServer, bearer: string | null, seen: FetchObservations, signal?: AbortSignal): Promise<Connection> {
  const [{ Client }, { StreamableHTTPClientTransport }, { SSEClientTransport }, { CfWorkerJsonSchemaValidator }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/validation/cfworker"),
  ]);
  const url = new URL(row.url);
  const headers: Record<string, string> = bearer ? { Authorization: `Bearer ${bearer}` } : {};
  const fetchFn = mcpFetch(env, seen);
  const options = { signal, timeout: CONNECT_TIMEOUT_MS };
  // The default validator (Ajv) compiles schemas with `new Function`, which workerd forbids.
  const newClient = () => new Client(CLIENT_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });

  const tryStreamable = row.transport !== "sse";
  if (tryStreamable) {
    const client = newClient();
    try {
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: fetchFn }), options);
      return { client, transport: "streamable_http", close: () => client.close().catch(() => {}) };
    } catch (e) {
      await client.close().catch(() => {});
      if (!isStatus(e, [400, 404, 405])) throw e;
    }
  }
  const client = newClient();
  try {
    await client.connect(new SSEClientTransport(url, { requestInit: { headers }, fetch: fetchFn }), options);
  } catch (e) {
    await client.close().catch(() => {});
    throw e;
  }
  return { client, transport: "sse", close: () => client.close().catch(() => {}) };
}

/**
 * Opens a connection to a registration. A 401 is retried once after a forced
 * token refresh (OAuth); otherwise it marks the registration `needs_auth` and
 * throws McpAuthRequired.
 */
export async function connectServer(env: Env, db: Database, row: McpServer, signal?: AbortSignal): Promise<Connection> {
  assertMcpUrl(env, new URL(row.url));
  for (let attempt = 0; ; attempt++) {
    const seen: FetchObservations = { unauthorized: false, challenge: null };
    let bearer: string | null;
    try {
      bearer = await bearerFor(env, db, row, attempt > 0, signal);
    } catch (e) {
      if (e instanceof McpAuthRequired) await setMcpStatus(db, row.id, "needs_auth", e.message);
      throw e;
    }
    try {
      return await open(env, row, bearer, seen, signal);
    } catch (e) {
      if (!(seen.unauthorized || isStatus(e, [401]))) throw e;
      if (attempt === 0 && row.oauthTokensEnc && !row.credentialsEnc) {
        row = (await getMcpServer(db, row.id)) ?? row;
        continue;
      }
      await markUnauthorized(db, row, seen.challenge);
      throw new McpAuthRequired(
        row.credentialsEnc
          ? "The MCP server refused the registered credentials (401)"
          : "The MCP server requires authorization; an administrator must connect it (POST /mcp/servers/:id/oauth/start)",
      );
    }
  }
}

async function markUnauthorized(db: Database, row: McpServer, challenge: string | null) {
  const m = challenge ? /resource_metadata="?([^",\s]+)"?/i.exec(challenge) : null;
  await updateMcpServer(db, row.id, {
    status: "needs_auth",
    lastError: row.credentialsEnc
      ? "The MCP server refused the registered credentials (401)"
      : "The MCP server requires authorization (401); connect it with POST /mcp/servers/:id/oauth/start",
    auth: row.credentialsEnc ? "credentials" : "oauth",
    oauthResourceMetadataUrl: m?.[1] ?? row.oauthResourceMetadataUrl,
  });
}

/** Every tool of a connected server (following cursors, at most 20 pages). */
async function listAllTools(conn: Connection, signal?: AbortSignal): Promise<McpToolManifestEntry[]> {
  const tools: McpToolManifestEntry[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await conn.client.listTools(cursor ? { cursor } : undefined, { signal, timeout: CONNECT_TIMEOUT_MS });
    for (const t of res.tools) {
      tools.push({ name: t.name, description: (t.description ?? t.title ?? "").slice(0, 2000), input_schema: (t.inputSchema ?? { type: "object" }) as Record<string, unknown> });
    }
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/**
 * Discovery: connect, list the tools, cache the manifest (status `ready`), or
 * record why not (`needs_auth`, `error`). Never throws: it runs after the
 * response (waitUntil) and before a turn uses a stale manifest.
 */
export async function discoverTools(env: Env, db: Database, serverId: string, signal?: AbortSignal): Promise<void> {
  const row = await getMcpServer(db, serverId);
  if (!row) return; // deleted meanwhile
  let conn: Connection | null = null;
  try {
    conn = await connectServer(env, db, row, signal);
    const tools = await listAllTools(conn, signal);
    if (await getMcpServer(db, serverId)) await saveManifest(db, serverId, tools, conn.transport);
  } catch (e) {
    if (e instanceof McpAuthRequired) return; // status already needs_auth
    const message = e instanceof ApiError ? e.message : `Discovery failed: ${safeMessage(e)}`;
    await setMcpStatus(db, serverId, "error", message).catch(() => {});
  } finally {
    await conn?.close();
  }
}

export interface CallResult {
  text: string;
  isError: boolean;
}

/** Renders an MCP tool result as text for the model. */
export function resultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const parts: string[] = [];
  for (const item of (Array.isArray(result.content) ? result.content : []) as Array<Record<string, any>>) {
    if (item.type === "text") parts.push(String(item.text ?? ""));
    else if (item.type === "resource" && item.resource) parts.push(item.resource.text ?? `[resource ${item.resource.uri ?? ""}]`);
    else if (item.type === "resource_link") parts.push(`[resource ${item.uri ?? ""}${item.name ? ` (${item.name})` : ""}]`);
    else if (item.type === "image" || item.type === "audio") parts.push(`[${item.type} ${item.mimeType ?? ""}]`);
  }
  if (!parts.length && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return parts.join("\n");
}

/**
 * Calls one tool of a registration; protocol and tool errors come back as `isError` results, never thrown.
 * Within a turn (`resources`) the calls to one server share one connection, opened by the first of them and
 * closed when the turn's tools are done (a connection that fails is dropped, and the next call opens a new
 * one); outside a turn each call opens and closes its own.
 */
export async function callServerTool(
  env: Env,
  db: Database,
  serverId: string,
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  opts: { resources?: TurnResources; timeoutMs?: number } = {},
): Promise<CallResult> {
  const row = await getMcpServer(db, serverId);
  if (!row) return { text: "This MCP server is no longer registered.", isError: true };
  const key = `mcp:${row.id}`;
  const shared = opts.resources;
  let conn: Connection | null = null;
  try {
    conn = shared ? await shared.shared(key, () => connectServer(env, db, row, signal), (c) => c.close()) : await connectServer(env, db, row, signal);
    const result = await conn.client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: opts.timeoutMs ?? 30_000 });
    return { text: resultText(result as { content?: unknown }), isError: result.isError === true };
  } catch (e) {
    if (shared) await shared.drop(key);
    if (signal.aborted) return { text: "The tool call was cancelled.", isError: true };
    if (e instanceof McpAuthRequired) return { text: e.message, isError: true };
    return { text: `The MCP tool call failed: ${safeMessage(e)}`, isError: true };
  } finally {
    if (!shared) await conn?.close();
  }
}

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { getChat } from "../../src/services/chats/chats";
import { getKnowledgeBase } from "../../src/services/knowledge-bases";
import { mcpToolProvider, serverSlug, toolName, uniqueSlugs } from "../../src/services/mcp/provider";
import { TOOL_PROVIDERS } from "../../src/capabilities";
import { emptyToolSettings, type ToolCallContext, type TurnScope } from "../../src/contracts/tools";
import { newChat } from "../chats/chat-helpers";
import { addMember, call, createKb, createKey, createOrg, expectError, expectStatus, type Auth } from "../helpers";
import { mcpUrl, register, registerReady, settled, track } from "./mcp-helpers";

const db = () => createDb(env.DB);

async function scopeOf(chatId: string): Promise<TurnScope> {
  const chat = (await getChat(db(), chatId))!;
  const kb = (await getKnowledgeBase(db(), chat.knowledgeBaseId))!;
  return { db: db(), env, chat, kb, actor: {}, subject: "user:x", mode: "deep", streaming: false, runId: null, depth: 0 };
}

const ctx = (scope: TurnScope, signal = new AbortController().signal): ToolCallContext => ({ signal, scope, emit: () => {}, callId: "call_1" });
const settings = (ids: string[]) => ({ ...emptyToolSettings(), mcpServerIds: ids });

describe("per-chat MCP servers: GET/PATCH /chats/:id/mcp-servers", () => {
  it("lists the organization's servers with enabled flags; PATCH replaces the list", async () => {
    const org = await createOrg();
    const auth: Auth = { cookie: org.owner.cookie };
    const a = await registerReady(org, { name: "Alpha", url: mcpUrl("/open/mcp") });
    const b = await registerReady(org, { name: "Beta", url: mcpUrl("/open/mcp") });
    const kb = await createKb(org);
    const chat = (await newChat(auth, kb)).chat ?? (await newChat(auth, kb));

    const list = expectStatus(await track(call(`/chats/${chat.id}/mcp-servers`, auth)), 200);
    expect(list.servers).toEqual([
      { id: a.id, name: "Alpha", url: mcpUrl("/open/mcp"), status: "ready", tool_count: 4, enabled: false },
      { id: b.id, name: "Beta", url: mcpUrl("/open/mcp"), status: "ready", tool_count: 4, enabled: false },
    ]);
    const patched = expectStatus(await track(call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [b.id] } })), 200);
    expect(patched.servers.map((s: any) => [s.id, s.enabled])).toEqual([[a.id, false], [b.id, true]]);
    expect(expectStatus(await call(`/chats/${chat.id}/mcp-servers`, auth), 200).servers.find((s: any) => s.id === b.id).enabled).toBe(true);
    // Stored in the chat's settings, other settings kept.
    const row = (await getChat(db(), chat.id))!;
    expect(row.settings.enabled_mcp_server_ids).toEqual([b.id]);
    // Empty list disables all.
    expectStatus(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [] } }), 200);
    expect((await getChat(db(), chat.id))!.settings.enabled_mcp_server_ids).toEqual([]);
  });

  it("refuses ids of other organizations and unknown ids (400 naming them), and more than 25", async () => {
    const org = await createOrg();
    const auth: Auth = { cookie: org.owner.cookie };
    const mine = await registerReady(org, { name: "Mine", url: mcpUrl("/open/mcp") });
    const other = await createOrg();
    const foreign = await registerReady(other, { name: "Theirs", url: mcpUrl("/open/mcp") });
    const kb = await createKb(org);
    const chat = (await newChat(auth, kb)).chat;

    const e = expectError(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [mine.id, foreign.id] } }), 400);
    expect(e.message).toContain(foreign.id);
    expect(e.details?.[0]).toMatchObject({ path: "body.enabled_mcp_server_ids" });
    expect(e.details?.[0].message).toContain(foreign.id);
    const e2 = expectError(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: ["mcp_doesnotexist"] } }), 400);
    expect(e2.message).toContain("mcp_doesnotexist");
    const ids26 = Array.from({ length: 26 }, (_, i) => `mcp_${i}`);
    expectError(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: ids26 } }), 400);
    expectError(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: {} }), 400);
    // Nothing was enabled by the refused calls.
    expect((await getChat(db(), chat.id))!.settings.enabled_mcp_server_ids ?? []).toEqual([]);
    // The other organization's server is not listed.
    expect(expectStatus(await call(`/chats/${chat.id}/mcp-servers`, auth), 200).servers.map((s: any) => s.id)).toEqual([mine.id]);
  });

  it("25 servers are allowed", async () => {
    const org = await createOrg();
    const auth: Auth = { cookie: org.owner.cookie };
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push(expectStatus(await register(org, { name: `S${i}`, url: mcpUrl("/open/mcp") }), 201).id);
    const kb = await createKb(org);
    const chat = (await newChat(auth, kb)).chat;
    const r = expectStatus(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: ids } }), 200);
    expect(r.servers.filter((s: any) => s.enabled)).toHaveLength(25);
    for (const id of ids) await settled(org, id);
  }, 60_000);

  it("chat-owner rules: other users, other organizations, keys with and without the end user", async () => {
    const org = await createOrg();
    const owner: Auth = { cookie: org.owner.cookie };
    const s = await registerReady(org, { name: "Owned", url: mcpUrl("/open/mcp") });
    const kb = await createKb(org);
    const chat = (await newChat(owner, kb)).chat;
    const colleague = await addMember(org, "developer");
    const stranger = await createOrg();
    const body = { enabled_mcp_server_ids: [s.id] };
    for (const auth of [{ cookie: colleague.cookie }, { cookie: stranger.owner.cookie }]) {
      expectError(await call(`/chats/${chat.id}/mcp-servers`, auth), 404);
      expectError(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body }), 404);
    }
    // A signed-in user may not send external_subject_id.
    expectError(await call(`/chats/${chat.id}/mcp-servers?external_subject_id=u1`, owner), 400);

    // An API-key chat of an end user: only with the same external_subject_id.
    const { key } = await createKey(org, { scopes: ["query:rag", "documents:read"] });
    const keyChat = (await newChat({ key }, kb, { external_subject_id: "end-user-1" })).chat;
    expectStatus(await call(`/chats/${keyChat.id}/mcp-servers?external_subject_id=end-user-1`, { key }), 200);
    expectStatus(await call(`/chats/${keyChat.id}/mcp-servers?external_subject_id=end-user-1`, { key, method: "PATCH", body }), 200);
    expectError(await call(`/chats/${keyChat.id}/mcp-servers`, { key }), 404);
    expectError(await call(`/chats/${keyChat.id}/mcp-servers?external_subject_id=end-user-2`, { key, method: "PATCH", body }), 404);
    // A key without query:rag, and a key of another organization.
    const readOnly = await createKey(org, { scopes: ["documents:read"] });
    expectError(await call(`/chats/${keyChat.id}/mcp-servers?external_subject_id=end-user-1`, { key: readOnly.key }), 403);
    const strangerKey = await createKey(stranger, { scopes: ["query:rag"] });
    expectError(await call(`/chats/${keyChat.id}/mcp-servers?external_subject_id=end-user-1`, { key: strangerKey.key }), 404);
    // The owner's own chat is not the application's.
    expectError(await call(`/chats/${chat.id}/mcp-servers`, { key }), 404);
  });

  it("a deleted registration disappears from the chat's list and toolbox", async () => {
    const org = await createOrg();
    const auth: Auth = { cookie: org.owner.cookie };
    const a = await registerReady(org, { name: "Keep", url: mcpUrl("/open/mcp") });
    const b = await registerReady(org, { name: "Drop", url: mcpUrl("/open/mcp") });
    const kb = await createKb(org);
    const chat = (await newChat(auth, kb)).chat;
    expectStatus(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [a.id, b.id] } }), 200);
    const scope = await scopeOf(chat.id);
    const toolsBefore = await mcpToolProvider.tools(scope, settings([a.id, b.id]));
    const dropEcho = toolsBefore.find((t) => t.name === "mcp__drop__echo")!;
    expect(dropEcho).toBeTruthy();
    expect((await call(`/mcp/servers/${b.id}?org_id=${org.id}`, { ...auth, method: "DELETE" })).status).toBe(204);

    const list = expectStatus(await call(`/chats/${chat.id}/mcp-servers`, auth), 200);
    expect(list.servers.map((s: any) => [s.id, s.enabled])).toEqual([[a.id, true]]);
    const names = (await mcpToolProvider.tools(await scopeOf(chat.id), settings([a.id, b.id]))).map((t) => t.name);
    expect(names.some((n) => n.startsWith("mcp__drop__"))).toBe(false);
    expect(names).toContain("mcp__keep__echo");
    // A toolbox built before the deletion cannot use it any more either.
    const late = await dropEcho.execute({ text: "hi" }, ctx(scope));
    expect(late.isError).toBe(true);
    expect(late.text).toMatch(/no longer registered/);
    // PATCH with the deleted id is refused now.
    expectError(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [b.id] } }), 400);
  });
});

describe("the MCP tool provider (toolbox contract)", () => {
  it("is registered, names tools mcp__<slug>__<tool>, and executes them through the SDK client", async () => {
    expect(TOOL_PROVIDERS).toContain(mcpToolProvider);
    const org = await createOrg();
    const auth: Auth = { cookie: org.owner.cookie };
    const s = await registerReady(org, { name: "My Tools!", url: mcpUrl("/open/mcp") });
    const kb = await createKb(org);
    const chat = (await newChat(auth, kb)).chat;
    const scope = await scopeOf(chat.id);
    const tools = await mcpToolProvider.tools(scope, settings([s.id]));
    expect(tools.map((t) => t.name).sort()).toEqual(["mcp__my_tools__add", "mcp__my_tools__echo", "mcp__my_tools__fail", "mcp__my_tools__whoami"]);
    const echo = tools.find((t) => t.name === "mcp__my_tools__echo")!;
    expect(echo).toMatchObject({ kind: "text", origin: { type: "mcp", serverId: s.id, tool: "echo" } });
    expect(echo.plan).toBeUndefined(); // local-extractive never calls MCP tools
    expect(echo.inputSchema).toMatchObject({ type: "object", properties: { text: { type: "string" } } });

    // A result is a citable passage named after the server and tool.
    expect(await echo.execute({ text: "hello" }, ctx(scope))).toEqual({
      passages: [{ document_id: null, filename: "My Tools!: echo", chunk_id: null, text: "echo: hello", score: 1, page: null, url: null }],
    });
    const add = tools.find((t) => t.name === "mcp__my_tools__add")!;
    expect((await add.execute({ a: 2, b: 40 }, ctx(scope))).passages?.[0].text).toBe("42");
    // A tool error is a result with isError, not a thrown error.
    const fail = tools.find((t) => t.name === "mcp__my_tools__fail")!;
    expect(await fail.execute({}, ctx(scope))).toEqual({ text: "something broke on the tool side", isError: true });
    // Invalid input: the server's validation error comes back as an error result.
    const bad = await add.execute({ a: "x" }, ctx(scope));
    expect(bad.isError).toBe(true);
    // An aborted call ends as an error result.
    const ac = new AbortController();
    ac.abort();
    expect((await echo.execute({ text: "x" }, ctx(scope, ac.signal))).isError).toBe(true);
  });

  it("only ready servers of the chat's organization contribute; validate refuses foreign ids with 400", async () => {
    const org = await createOrg();
    const auth: Auth = { cookie: org.owner.cookie };
    const ready = await registerReady(org, { name: "Ready", url: mcpUrl("/open/mcp") });
    const needsAuth = expectStatus(await register(org, { name: "Locked", url: mcpUrl("/cred/mcp") }), 201);
    expect((await settled(org, needsAuth.id)).status).toBe("needs_auth");
    const other = await createOrg();
    const foreign = await registerReady(other, { name: "Foreign", url: mcpUrl("/open/mcp") });
    const kb = await createKb(org);
    const chat = (await newChat(auth, kb)).chat;
    const scope = await scopeOf(chat.id);

    const names = (await mcpToolProvider.tools(scope, settings([ready.id, needsAuth.id, foreign.id]))).map((t) => t.name);
    expect(names.every((n) => n.startsWith("mcp__ready__"))).toBe(true);
    expect(names).toHaveLength(4);
    expect(await mcpToolProvider.tools(scope, settings([]))).toEqual([]);

    const vscope = { db: db(), env, chat: scope.chat, subject: "user:x", mode: "deep" as const, depth: 0 };
    await mcpToolProvider.validate!(vscope, settings([ready.id, needsAuth.id]));
    // An id that no longer exists is a deleted registration: left out, not refused.
    await mcpToolProvider.validate!(vscope, settings([ready.id, "mcp_deleted"]));
    await expect(mcpToolProvider.validate!(vscope, settings([ready.id, foreign.id]))).rejects.toMatchObject({ status: 400, message: expect.stringContaining(foreign.id) });
  });

  it("refreshes a manifest older than an hour when the toolbox is built", async () => {
    const org = await createOrg();
    const s = await registerReady(org, { name: "Stale", url: mcpUrl("/open/mcp") });
    await env.DB.prepare("UPDATE mcp_servers SET manifest = '[]', tool_count = 0, manifest_refreshed_at = '2000-01-01T00:00:00.000Z' WHERE id = ?").bind(s.id).run();
    const kb = await createKb(org);
    const chat = (await newChat({ cookie: org.owner.cookie }, kb)).chat;
    const tools = await mcpToolProvider.tools(await scopeOf(chat.id), settings([s.id]));
    expect(tools).toHaveLength(4);
    const row = await env.DB.prepare("SELECT tool_count, manifest_refreshed_at FROM mcp_servers WHERE id = ?").bind(s.id).first<any>();
    expect(row.tool_count).toBe(4);
    expect(Date.parse(row.manifest_refreshed_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("slugs: lower-cased [a-z0-9_], at most 24 characters, unique within the turn", () => {
    expect(serverSlug("GitHub Issues (prod)")).toBe("github_issues_prod");
    expect(serverSlug("A very long server name that goes on")).toHaveLength(24);
    expect(serverSlug("äöü")).toBe("server");
    const slugs = uniqueSlugs([
      { id: "1", name: "Tools" },
      { id: "2", name: "tools" },
      { id: "3", name: "TOOLS" },
    ]);
    expect([...slugs.values()]).toEqual(["tools", "tools_2", "tools_3"]);
    const long = uniqueSlugs([
      { id: "1", name: "x".repeat(30) },
      { id: "2", name: "x".repeat(30) },
    ]);
    expect([...long.values()].every((s) => s.length <= 24)).toBe(true);
    expect(new Set(long.values()).size).toBe(2);
    expect(toolName("tools", "get.issue/v2")).toBe("mcp__tools__get_issue_v2");
    expect(toolName("tools", "y".repeat(100)).length).toBe(64);
  });
});

import { describe, expect, it } from "vitest";
import { AgentTaskHandler } from "../../src/services/a2a/server";
import { kbWithDocument } from "../chats/chat-helpers";
import { createAgent, runAgent } from "../agents/agent-helpers";
import { register } from "../a2a/a2a-helpers";
import { mint, SITE } from "../embed/embed-helpers";
import { connectByOAuth } from "../mcp/oauth-helpers";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectStatus, type ApiResponse } from "../helpers";

/**
 * Door by door (issue 23): the REST sweeps (sweep.test.ts, tenancy-sweep.test.ts) walk the OpenAPI
 * routes; this one tries each resource kind through every OTHER door that reaches it — the A2A
 * JSON-RPC methods, the knowledge-base MCP tools (with keys and OAuth tokens), delegation, embed tokens, registration secrets —
 * as every kind of outsider. One table: a door added to the A2A handler or the MCP server without a
 * row here fails the coverage checks at the bottom. Each door also has an insider who does reach the
 * resource, so a door that refuses everyone (a test that cannot fail) is caught too.
 */

type Auth = { cookie?: string; key?: string; headers?: Record<string, string> };
type Outcome = "reached" | "refused";

const OUTSIDERS = [
  "another organization's owner", "another organization's key", "another tenant's key", "a key of another knowledge base", "a viewer",
  "an embed token of another knowledge base", "an MCP OAuth token of another knowledge base",
] as const;
type OutsiderName = (typeof OUTSIDERS)[number];

async function world() {
  // The victim: a tenant with a knowledge base, a developer's private agent run, a registration with a secret header.
  const { org, kb } = await kbWithDocument();
  const owner = { cookie: org.owner.cookie };
  const dev = await addMember(org, "developer");
  const viewer = await addMember(org, "viewer");
  const agent = await createAgent(owner, kb, { name: "Handbook desk" });
  const run = expectStatus(await runAgent({ cookie: dev.cookie }, agent.id, { content: "What is the refund policy?" }), 200);
  const a2a = expectStatus(await register(owner, kb.id, { headers: JSON.stringify({ Authorization: "Bearer victim-remote-secret" }) }), 201);
  // A delegate open to inbound delegation, in the victim's tenant.
  const openKb = await createKb(org);
  expectStatus(await call(`/knowledge-bases/${openKb.id}`, { ...owner, method: "PATCH", body: { agent_sharing: { inbound_delegation_enabled: true } } }), 200);
  const delegate = await createAgent(owner, openKb, { name: "Open desk" });
  // Places the outsiders may legitimately use.
  const otherTenant = await createTenant(org, { credits_pool: 50 });
  const otherTenantKb = await createKb(org, { tenant_id: otherTenant.id });
  const sideKb = await createKb(org); // same tenant, not open to delegation
  const stranger = await createOrg();
  const strangerKb = await createKb(stranger);
  const all = ["query:rag", "documents:read", "documents:write", "agents:read", "agents:write"];
  const outsiders: Record<OutsiderName, { auth: Auth; home: { id: string; tenant_id: string } }> = {
    "another organization's owner": { auth: { cookie: stranger.owner.cookie }, home: strangerKb },
    "another organization's key": { auth: { key: (await createKey(stranger, { scopes: all })).key }, home: strangerKb },
    "another tenant's key": { auth: { key: (await createKey(org, { scopes: all, tenant_ids: [otherTenant.id] })).key }, home: otherTenantKb },
    "a key of another knowledge base": { auth: { key: (await createKey(org, { scopes: all, knowledge_base_id: sideKb.id })).key }, home: sideKb },
    "a viewer": { auth: { cookie: viewer.cookie }, home: sideKb },
    "an embed token of another knowledge base": { auth: { key: (await mint(owner, otherTenantKb)).token, headers: { Origin: SITE } }, home: otherTenantKb },
    "an MCP OAuth token of another knowledge base": { auth: { key: (await connectByOAuth(org.owner.cookie, [sideKb.id])).saved!.access_token }, home: sideKb },
  };
  const insiderKey = (await createKey(org, { scopes: all })).key;
  return { org, kb, dev, agent, run: run.run, chatId: run.chat_id as string, a2a, delegate, openKb, outsiders, insiderKey };
}

type World = Awaited<ReturnType<typeof world>>;

const rpc = (w: World, auth: Auth, method: string, params: unknown) =>
  call(`/agents/${w.agent.id}/a2a`, { ...auth, headers: { ...auth.headers, ...(method.includes("/") ? {} : { "A2A-Version": "1.0" }) }, body: { jsonrpc: "2.0", id: 1, method, params } });

/** A JSON-RPC answer that reached the (completed) task: a result naming it, or "not cancelable" (it was found). */
const TASK_NOT_CANCELABLE = -32002;
const reachedTask = (r: ApiResponse, runId: string): Outcome =>
  r.status === 200 && (JSON.stringify(r.body?.result ?? "").includes(runId) || r.body?.error?.code === TASK_NOT_CANCELABLE) ? "reached" : "refused";

/** A message continuing a conversation, in the 1.0 or the 0.3 shape. */
const message = (method: string, text: string, contextId: string) =>
  method.includes("/")
    ? { message: { kind: "message", role: "user", messageId: crypto.randomUUID(), contextId, parts: [{ kind: "text", text }] } }
    : { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", contextId, parts: [{ text }] } };

const mcp = (auth: Auth, name: string, args: Record<string, unknown>) =>
  call("/mcp", {
    ...auth,
    headers: { ...auth.headers, Accept: "application/json, text/event-stream" },
    body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
  });

/** An MCP tool answer that reached the knowledge base: a successful result that names it or quotes it. */
const reachedKb = (r: ApiResponse, kbId: string): Outcome => {
  const result = r.body?.result;
  if (r.status !== 200 || !result || result.isError) return "refused";
  const text = JSON.stringify(result);
  return text.includes(kbId) || /refund/i.test(text) ? "reached" : "refused";
};

const openai = (auth: Auth, model: string) =>
  call("/openai/chat/completions", { ...auth, body: { model, messages: [{ role: "user", content: "What is the refund policy?" }] } });
const openaiReached = (r: ApiResponse): Outcome => (r.status === 200 && /refund/i.test(JSON.stringify(r.body?.choices ?? "")) ? "reached" : "refused");

const uiStream = (w: World, auth: Auth) =>
  call(`/chats/${w.chatId}/ui-stream`, {
    ...auth,
    body: { id: w.chatId, trigger: "submit-message", messages: [{ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text: "And the refund window?" }] }] },
  });
const uiStreamReached = (r: ApiResponse): Outcome => (r.status === 200 && String(r.body).includes("text-delta") ? "reached" : "refused");

interface Door {
  door: string;
  resource: string;
  /** Who is an outsider for this resource (default: all); those left out may reach it by decision, named in `legit`. */
  outsiders?: readonly OutsiderName[];
  legit?: string;
  attempt(w: World, auth: Auth, home: { id: string; tenant_id: string }): Promise<Outcome>;
  /** The same attempt by someone who may: proves the door can answer "reached". */
  insider(w: World): Promise<Outcome>;
}

const taskDoor = (method: string): Door => ({
  door: `A2A ${method}`,
  resource: "agent run (a member's own)",
  attempt: async (w, auth) => reachedTask(await rpc(w, auth, method, { id: w.run.id }), w.run.id),
  insider: async (w) => reachedTask(await rpc(w, { cookie: w.dev.cookie }, method, { id: w.run.id }), w.run.id),
});

const sendDoor = (method: string): Door => ({
  door: `A2A ${method} (contextId)`,
  resource: "chat (a member's run conversation)",
  attempt: async (w, auth) => {
    const r = await rpc(w, auth, method, message(method, "And the refund window?", w.chatId));
    return r.status === 200 && r.body?.result && JSON.stringify(r.body.result).includes(w.chatId) ? "reached" : "refused";
  },
  insider: async (w) => {
    const r = await rpc(w, { cookie: w.dev.cookie }, method, message(method, "And the refund window?", w.chatId));
    return r.status === 200 && JSON.stringify(r.body?.result ?? "").includes(w.chatId) ? "reached" : "refused";
  },
});

const mcpDoor = (tool: string, args: (w: World) => Record<string, unknown>): Door => ({
  door: `MCP tool ${tool}`,
  resource: "knowledge base (another tenant's or knowledge base's)",
  attempt: async (w, auth) => reachedKb(await mcp(auth, tool, args(w)), w.kb.id),
  insider: async (w) => reachedKb(await mcp({ key: w.insiderKey }, tool, args(w)), w.kb.id),
});

const chatWithDelegate = (auth: Auth, home: { id: string; tenant_id: string }, delegateId: string) =>
  call("/chats", {
    ...auth,
    body: { id: crypto.randomUUID(), tenant_id: home.tenant_id, knowledge_base_id: home.id, model: "local-extractive", message: "refund?", delegate_agent_ids: [delegateId] },
  });

/** THE table: every door into a resource that is not a REST route of that resource. */
const DOORS: Door[] = [
  taskDoor("GetTask"),
  taskDoor("tasks/get"),
  taskDoor("CancelTask"),
  taskDoor("tasks/cancel"),
  sendDoor("SendMessage"),
  sendDoor("message/send"),
  mcpDoor("list_knowledge_bases", () => ({})),
  mcpDoor("search", (w) => ({ query: "refund policy", knowledge_base_id: w.kb.id })),
  mcpDoor("ask", (w) => ({ question: "What is the refund policy?", knowledge_base_id: w.kb.id, model: "local-extractive" })),
  {
    door: "delegation (a chat's delegate_agent_ids)",
    resource: "agent of a knowledge base open to inbound delegation",
    outsiders: ["another organization's owner", "another organization's key", "another tenant's key", "an embed token of another knowledge base", "an MCP OAuth token of another knowledge base"],
    legit: "members and keys of the same tenant may delegate to a knowledge base that opted in",
    attempt: async (w, auth, home) => ((await chatWithDelegate(auth, home, w.delegate.id)).status === 201 ? "reached" : "refused"),
    insider: async (w) => ((await chatWithDelegate({ key: w.insiderKey }, { id: w.kb.id, tenant_id: w.kb.tenant_id }, w.delegate.id)).status === 201 ? "reached" : "refused"),
  },
  {
    door: "delegation (a chat's delegate_agent_ids), closed knowledge base",
    resource: "agent of a knowledge base not open to inbound delegation",
    attempt: async (w, auth, home) => ((await chatWithDelegate(auth, home, w.agent.id)).status === 201 ? "reached" : "refused"),
    insider: async (w) => ((await chatWithDelegate({ key: w.insiderKey }, { id: w.kb.id, tenant_id: w.kb.tenant_id }, w.agent.id)).status === 201 ? "reached" : "refused"),
  },
  {
    door: "delegation (an agent's delegate_agent_ids)",
    resource: "agent of a knowledge base open to inbound delegation",
    outsiders: ["another organization's owner", "another organization's key", "another tenant's key", "an embed token of another knowledge base", "an MCP OAuth token of another knowledge base"],
    legit: "members and keys of the same tenant may delegate to a knowledge base that opted in",
    attempt: async (w, auth, home) =>
      (await call("/agents", { ...auth, body: { tenant_id: home.tenant_id, knowledge_base_id: home.id, name: "x", goal: "g", model: "local-extractive", delegate_agent_ids: [w.delegate.id] } })).status === 201 ? "reached" : "refused",
    insider: async (w) =>
      (await call("/agents", { key: w.insiderKey, body: { tenant_id: w.kb.tenant_id, knowledge_base_id: w.kb.id, name: "x", goal: "g", model: "local-extractive", delegate_agent_ids: [w.delegate.id] } })).status === 201 ? "reached" : "refused",
  },
  {
    door: "embed-token chat (POST /chats)",
    resource: "knowledge base",
    outsiders: ["another organization's owner", "another organization's key", "another tenant's key", "a key of another knowledge base", "an embed token of another knowledge base", "an MCP OAuth token of another knowledge base"],
    legit: "a viewer is a member: members may chat with every knowledge base of their organization",
    attempt: async (w, auth) => ((await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: w.kb.tenant_id, knowledge_base_id: w.kb.id, model: "local-extractive", message: "refund?" } })).status === 201 ? "reached" : "refused"),
    insider: async (w) => {
      const token = (await mint({ cookie: w.org.owner.cookie }, w.kb)).token;
      const r = await call("/chats", { key: token, headers: { Origin: SITE }, body: { id: crypto.randomUUID(), tenant_id: w.kb.tenant_id, knowledge_base_id: w.kb.id, model: "local-extractive", message: "refund?" } });
      return r.status === 201 ? "reached" : "refused";
    },
  },
  {
    door: "OpenAI-compatible chat completions (model kb:<id>)",
    resource: "knowledge base",
    attempt: async (w, auth) => openaiReached(await openai(auth, `kb:${w.kb.id}`)),
    insider: async (w) => openaiReached(await openai({ key: w.insiderKey }, `kb:${w.kb.id}`)),
  },
  {
    door: "OpenAI-compatible chat completions (model agent:<id>)",
    resource: "agent",
    attempt: async (w, auth) => openaiReached(await openai(auth, `agent:${w.agent.id}`)),
    insider: async (w) => openaiReached(await openai({ key: w.insiderKey }, `agent:${w.agent.id}`)),
  },
  {
    door: "OpenAI-compatible model list (GET /openai/models)",
    resource: "knowledge base and agent ids",
    attempt: async (w, auth) => (JSON.stringify((await call("/openai/models", auth)).body).includes(w.kb.id) ? "reached" : "refused"),
    insider: async (w) => (JSON.stringify((await call("/openai/models", { key: w.insiderKey })).body).includes(w.kb.id) ? "reached" : "refused"),
  },
  {
    door: "AI SDK UI stream (POST /chats/{id}/ui-stream)",
    resource: "chat (a member's run conversation)",
    attempt: async (w, auth) => uiStreamReached(await uiStream(w, auth)),
    insider: async (w) => uiStreamReached(await uiStream(w, { cookie: w.dev.cookie })),
  },
  {
    door: "A2A registration read (GET /knowledge-bases/{id}/a2a-agents)",
    resource: "registration secrets (header values)",
    attempt: async (w, auth) => (JSON.stringify((await call(`/knowledge-bases/${w.kb.id}/a2a-agents`, auth)).body).includes("victim-remote-secret") ? "reached" : "refused"),
    insider: async (w) => (JSON.stringify((await call(`/knowledge-bases/${w.kb.id}/a2a-agents`, { key: w.insiderKey })).body).includes("victim-remote-secret") ? "reached" : "refused"),
  },
];

describe("door by door: every outsider is refused at every door, every door lets its insider in", () => {
  it("walks the table", async () => {
    const w = await world();
    const report: string[] = [];
    const reached: string[] = [];
    for (const d of DOORS) {
      const tried: string[] = [];
      for (const name of d.outsiders ?? OUTSIDERS) {
        const o = w.outsiders[name];
        const outcome = await d.attempt(w, o.auth, o.home);
        if (outcome === "reached") reached.push(`${d.door} (${d.resource}) let in ${name}`);
        tried.push(name);
      }
      expect(await d.insider(w), `${d.door}: its insider must reach the resource (else this row proves nothing)`).toBe("reached");
      report.push(`${d.door} — ${d.resource}: refused ${tried.length} outsiders (${tried.join("; ")})${d.legit ? `; by decision ${d.legit}` : ""}`);
    }
    console.log(`door sweep, ${DOORS.length} doors × ${OUTSIDERS.length} outsiders:\n  ${report.join("\n  ")}`);
    expect(reached).toEqual([]);
  }, 180_000);

  it("the table covers every A2A method our agents serve and every tool of the MCP endpoint", async () => {
    const doors = new Set(DOORS.map((d) => d.door));
    // A2A: each handler method that touches a task or a conversation has rows; the rest are refused as unsupported.
    const UNSUPPORTED = new Set([
      "getAgentCard", "getAuthenticatedExtendedAgentCard", "createTaskPushNotificationConfig", "getTaskPushNotificationConfig",
      "listTaskPushNotificationConfigs", "deleteTaskPushNotificationConfig", "listTasks", "resubscribe",
    ]);
    const ROWS: Record<string, string[]> = {
      getTask: ["A2A GetTask", "A2A tasks/get"],
      cancelTask: ["A2A CancelTask", "A2A tasks/cancel"],
      sendMessage: ["A2A SendMessage (contextId)", "A2A message/send (contextId)"],
      sendMessageStream: ["A2A SendMessage (contextId)"], // same preparation (one prepare() for both)
    };
    const methods = Object.getOwnPropertyNames(AgentTaskHandler.prototype).filter((m) => m !== "constructor" && !m.startsWith("_") && !["prepare", "mapError", "runOf", "unsupported"].includes(m));
    for (const m of methods) {
      if (UNSUPPORTED.has(m)) continue;
      expect(ROWS[m], `A2A handler method ${m} has no door row`).toBeTruthy();
      for (const row of ROWS[m]) expect(doors.has(row), row).toBe(true);
    }
    // MCP: every tool the endpoint lists.
    const org = await createOrg();
    const key = (await createKey(org, { scopes: ["query:rag", "documents:read"] })).key;
    const listed = await call("/mcp", { key, headers: { Accept: "application/json, text/event-stream" }, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    const tools: string[] = listed.body.result.tools.map((t: { name: string }) => t.name);
    expect(tools.length).toBeGreaterThan(0);
    for (const t of tools) expect(doors.has(`MCP tool ${t}`), `MCP tool ${t} has no door row`).toBe(true);
  });
});

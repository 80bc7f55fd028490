import { A2AClient } from "a2a-sdk-03/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { createAgent } from "../agents/agent-helpers";
import { kbWithDocument } from "../chats/chat-helpers";
import { API, call, createKb, createKey, createOrg, expectError, expectStatus, fetchWorker, testServer } from "../helpers";
import { register } from "./a2a-helpers";

/**
 * The A2A edges of API-DECISIONS wave 3 ("Protocols at the edge"): the card by protocol version, a
 * 0.3 client (the real @a2a-js/sdk 0.3, installed as `a2a-sdk-03`) built from our card, JSON-RPC
 * errors as the protocol defines them, GetTask history, trailing slashes, and an external agent's
 * card fetched with its stored headers.
 */

const cardPath = (agentId: string) => `/agents/${agentId}/a2a/.well-known/agent-card.json`;

/** A fetch for the SDK that adds the key and calls the Worker (never workerd's bare global fetch). */
const keyedFetch =
  (key: string): typeof fetch =>
  (input, init) => {
    const req = new Request(input as RequestInfo, init);
    if (!req.url.includes("/.well-known/")) req.headers.set("Authorization", `Bearer ${key}`);
    return fetchWorker(req);
  };

async function agentWithKey() {
  const { org, kb, auth } = await kbWithDocument();
  const agent = await createAgent(auth, kb);
  const { key } = await createKey(org, { scopes: ["query:rag", "agents:read"] });
  return { org, kb, auth, agent, key };
}

const rpcRaw = (agentId: string, key: string, raw: string, headers: Record<string, string> = {}) =>
  call(`/agents/${agentId}/a2a`, { key, raw, headers: { "Content-Type": "application/json", ...headers } });

describe("the agent card by A2A-Version", () => {
  it("no header or 0.3: the 0.3 card with the 1.0 interfaces embedded; 1.0: the 1.0 card; anything else: 400", async () => {
    const { agent } = await agentWithKey();
    const url = `${API}/agents/${agent.id}/a2a`;
    const legacy = await call(cardPath(agent.id));
    const v03 = expectStatus(legacy, 200);
    expect(legacy.headers.get("Vary")).toContain("A2A-Version");
    expect(v03).toMatchObject({ name: "Refund helper", url, preferredTransport: "JSONRPC", protocolVersion: "0.3", version: "1" });
    expect(v03.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "Bearer" });
    expect(v03.security).toEqual([{ bearer: [] }]);
    expect(v03.skills[0]).toMatchObject({ id: "ask", tags: ["knowledge-base", "cited-answers"] });
    expect(v03.supportedInterfaces.map((i: any) => i.protocolVersion)).toEqual(["1.0", "0.3"]);
    expect(v03.supportedInterfaces.every((i: any) => i.url === url && i.protocolBinding === "JSONRPC")).toBe(true);
    expect(JSON.stringify(v03)).not.toContain("$case");
    expect(expectStatus(await call(cardPath(agent.id), { headers: { "A2A-Version": "0.3" } }), 200)).toEqual(v03);

    const v1 = expectStatus(await call(cardPath(agent.id), { headers: { "A2A-Version": "1.0" } }), 200);
    expect(v1.url).toBeUndefined();
    expect(v1.supportedInterfaces[0]).toMatchObject({ url, protocolVersion: "1.0" });
    expect(v1.securitySchemes.bearer.httpAuthSecurityScheme.scheme).toBe("Bearer");

    const refused = expectError(await call(cardPath(agent.id), { headers: { "A2A-Version": "2.0" } }), 400, "invalid_request");
    expect(refused.message).toMatch(/'2\.0' is not supported.*1\.0, 0\.3/);
  });
});

describe("an A2A 0.3 client (@a2a-js/sdk 0.3) built from our card", () => {
  it("A2AClient.fromCardUrl: message/send, tasks/get with history, message/stream, tasks/cancel", async () => {
    const { agent, key } = await agentWithKey();
    const client = await A2AClient.fromCardUrl(`${API}${cardPath(agent.id)}`, { fetchImpl: keyedFetch(key) });
    expect((await client.getAgentCard()).url).toBe(`${API}/agents/${agent.id}/a2a`);

    const sent = await client.sendMessage({
      message: { kind: "message", role: "user", messageId: crypto.randomUUID(), parts: [{ kind: "text", text: "How long do refunds take?" }] },
    });
    if ("error" in sent) throw new Error(JSON.stringify(sent.error));
    const task = sent.result as any;
    expect(task).toMatchObject({ kind: "task", status: { state: "completed" } });
    expect(task.id).toMatch(/^run_/);
    expect(JSON.stringify(task.artifacts)).toMatch(/5 business days/);

    // tasks/get returns the task's history: its question and its answer, cut by historyLength.
    const got = await client.getTask({ id: task.id });
    if ("error" in got) throw new Error(JSON.stringify(got.error));
    const history = (got.result as any).history as any[];
    expect(history.map((m) => m.role)).toEqual(["user", "agent"]);
    expect(history[0].parts[0].text).toBe("How long do refunds take?");
    expect(history[1].parts[0].text).toMatch(/5 business days/);
    const last = await client.getTask({ id: task.id, historyLength: 1 });
    expect(((last as any).result.history as any[]).map((m) => m.role)).toEqual(["agent"]);

    // Streaming through the 0.3 client.
    const kinds: string[] = [];
    let finalState = "";
    for await (const ev of client.sendMessageStream({
      message: { kind: "message", role: "user", messageId: crypto.randomUUID(), parts: [{ kind: "text", text: "What are the support hours?" }] },
    })) {
      kinds.push(ev.kind);
      if (ev.kind === "status-update") finalState = ev.status.state;
    }
    expect(kinds[0]).toBe("task");
    expect(kinds).toContain("artifact-update");
    expect(finalState).toBe("completed");

    // A finished task is not cancelable: the protocol's error, through the 0.3 client.
    const cancel = await client.cancelTask({ id: task.id });
    expect("error" in cancel && cancel.error.code).toBe(-32002);
    // Resubscribing is not offered: unsupported operation (not an internal error).
    await expect(async () => {
      for await (const _ of client.resubscribeTask({ id: task.id })) void _;
    }).rejects.toThrow(/-32004|not supported/i);
  });
});

describe("JSON-RPC errors as the protocol defines them", () => {
  it("malformed JSON -32700, not an object -32600, wrong Content-Type -32005, unsupported A2A-Version -32009", async () => {
    const { agent, key } = await agentWithKey();
    const parse = expectStatus(await rpcRaw(agent.id, key, '{"jsonrpc": "2.0", "method": '), 200);
    expect(parse).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect(expectStatus(await rpcRaw(agent.id, key, "[1, 2]"), 200).error.code).toBe(-32600);
    expect(expectStatus(await rpcRaw(agent.id, key, '"text"'), 200).error.code).toBe(-32600);
    const getTask = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: "run_x" } });
    const ctype = expectStatus(await rpcRaw(agent.id, key, getTask, { "Content-Type": "text/plain" }), 200);
    expect(ctype).toMatchObject({ id: 7, error: { code: -32005 } });
    const version = expectStatus(await rpcRaw(agent.id, key, getTask, { "A2A-Version": "2.0" }), 200);
    expect(version).toMatchObject({ id: 7, error: { code: -32009 } });
    expect(version.error.message).toMatch(/2\.0/);
    // The versions the card offers pass.
    for (const v of ["1.0", "0.3"]) expect(expectStatus(await rpcRaw(agent.id, key, getTask, { "A2A-Version": v }), 200).error.code).toBe(-32001);
    // Anonymous callers still learn only that credentials are needed.
    expectError(await call(`/agents/${agent.id}/a2a`, { raw: "{oops", headers: { "Content-Type": "application/json" } }), 401);
  });

  it("SubscribeToTask and tasks/resubscribe answer unsupported-operation (-32004), not an internal error", async () => {
    const { agent, key } = await agentWithKey();
    const ran = expectStatus(await call(`/agents/${agent.id}/messages`, { key, body: { content: "How long do refunds take?" } }), 200);
    const body = (method: string) => JSON.stringify({ jsonrpc: "2.0", id: "s", method, params: { id: ran.run.id } });
    const r = await rpcRaw(agent.id, key, body("SubscribeToTask"), { "A2A-Version": "1.0" });
    expect(r.headers.get("Content-Type")).toMatch(/application\/json/);
    expect(expectStatus(r, 200)).toMatchObject({ id: "s", error: { code: -32004 } });
    // 0.3: as the SDK's server, tasks/resubscribe always answers SSE; the error is its one event.
    const legacy = await rpcRaw(agent.id, key, body("tasks/resubscribe"));
    expect(legacy.headers.get("Content-Type")).toMatch(/text\/event-stream/);
    expect(JSON.parse(String(legacy.body).replace(/^data: /, ""))).toMatchObject({ id: "s", error: { code: -32004 } });
    // Push notifications: the same.
    const push = expectStatus(
      await rpcRaw(agent.id, key, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTaskPushNotificationConfigs", params: { taskId: ran.run.id } }), { "A2A-Version": "1.0" }),
      200,
    );
    expect(push.error.code).not.toBe(-32603);
  });

  it("GetTask (1.0) returns the history and honours historyLength", async () => {
    const { agent, key } = await agentWithKey();
    const ran = expectStatus(await call(`/agents/${agent.id}/messages`, { key, body: { content: "How long do refunds take?" } }), 200);
    const get = async (params: Record<string, unknown>) =>
      expectStatus(await rpcRaw(agent.id, key, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: ran.run.id, ...params } }), { "A2A-Version": "1.0" }), 200)
        .result;
    const all = await get({});
    expect(all.history.map((m: any) => m.role)).toEqual(["ROLE_USER", "ROLE_AGENT"]);
    expect(all.history[0]).toMatchObject({ taskId: ran.run.id, contextId: ran.chat_id, parts: [{ text: "How long do refunds take?" }] });
    expect(all.history[1].parts[0].text).toBe(ran.assistant_message.content);
    expect((await get({ historyLength: 1 })).history.map((m: any) => m.role)).toEqual(["ROLE_AGENT"]);
    expect((await get({ historyLength: 0 })).history ?? []).toEqual([]);
    // A second run in the same chat: each task's history is its own turn only.
    const next = expectStatus(await call(`/agents/${agent.id}/messages`, { key, body: { content: "What are the support hours?", chat_id: ran.chat_id } }), 200);
    const second = expectStatus(
      await rpcRaw(agent.id, key, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: next.run.id } }), { "A2A-Version": "1.0" }),
      200,
    ).result;
    expect(second.history).toHaveLength(2);
    expect(second.history[0].parts[0].text).toBe("What are the support hours?");
  });
});

describe("trailing slashes on the protocol endpoints", () => {
  it("POST /agents/:id/a2a/ and /mcp/ answer like the URLs without the slash; other paths stay strict", async () => {
    const { org, agent, key } = await agentWithKey();
    const r = await call(`/agents/${agent.id}/a2a/`, {
      key,
      headers: { "A2A-Version": "1.0" },
      body: { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "run_x" } },
    });
    expect(expectStatus(r, 200).error.code).toBe(-32001);
    const mcpKey = (await createKey(org, { scopes: ["query:rag", "documents:read"] })).key;
    const client = new Client({ name: "slash", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${API}/mcp/`), {
        requestInit: { headers: { Authorization: `Bearer ${mcpKey}` } },
        fetch: (input, init) => fetchWorker(new Request(input as RequestInfo, init)),
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("ask");
    await client.close();
    expect((await call(`/agents/${agent.id}/`, { key })).status).toBe(404);
  });
});

describe("an external agent's card is fetched with its stored headers", () => {
  it("register, and change the card URL later, against a card that needs the registration's credential", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const privateCard = `${testServer("a2a")}/private/.well-known/agent-card.json`;
    expectError(await register(auth, kb.id, { cardUrl: privateCard }), 422, "fetch_failed");
    expectError(await register(auth, kb.id, { cardUrl: privateCard, headers: { Authorization: "Bearer wrong" } }), 422, "fetch_failed");
    const ok = expectStatus(await register(auth, kb.id, { cardUrl: privateCard, headers: { Authorization: "Bearer remote-secret" } }), 201);
    expect(ok.card).toMatchObject({ name: "Warranty oracle", protocol_version: "1.0" });

    // A registration with stored headers moves to the private card: fetched with the stored headers.
    const open = expectStatus(await register(auth, kb.id, { name: "Moving", headers: { Authorization: "Bearer remote-secret" } }), 201);
    const moved = expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents/${open.id}`, { ...auth, method: "PATCH", body: { cardUrl: privateCard } }), 200);
    expect(moved.cardUrl).toBe(privateCard);
    // New headers in the same change are the ones used.
    const wrong = expectStatus(await register(auth, kb.id, { name: "Wrong" }), 201);
    expectError(
      await call(`/knowledge-bases/${kb.id}/a2a-agents/${wrong.id}`, { ...auth, method: "PATCH", body: { cardUrl: privateCard, headers: { Authorization: "Bearer nope" } } }),
      422,
      "fetch_failed",
    );
    const fixed = await call(`/knowledge-bases/${kb.id}/a2a-agents/${wrong.id}`, {
      ...auth,
      method: "PATCH",
      body: { cardUrl: privateCard, headers: { Authorization: "Bearer remote-secret" } },
    });
    expect(expectStatus(fixed, 200).cardUrl).toBe(privateCard);
  });
});

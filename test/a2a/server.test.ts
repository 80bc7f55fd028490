import { Role, TaskState, type Message, type Task } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { describe, expect, it } from "vitest";
import { API, call, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker } from "../helpers";
import { kbWithDocument } from "../chats/chat-helpers";
import { createAgent } from "../agents/agent-helpers";

/** An A2A client (the SDK's) talking to the Worker, authenticated with an API key. */
async function clientFor(agentId: string, key: string) {
  // Never the bare global fetch (workerd's Illegal invocation): an arrow that adds the key and calls the Worker.
  const fetchImpl: typeof fetch = (input, init) => {
    const req = new Request(input as RequestInfo, init);
    req.headers.set("Authorization", `Bearer ${key}`);
    return fetchWorker(req);
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  // The card lives under the agent's endpoint: pass its full URL and an empty path.
  return factory.createFromUrl(`${API}/agents/${agentId}/a2a/.well-known/agent-card.json`, "");
}

const message = (text: string, contextId = ""): Message => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId: "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const send = (text: string, extra: { contextId?: string; returnImmediately?: boolean } = {}) => ({
  tenant: "",
  message: message(text, extra.contextId),
  configuration: extra.returnImmediately ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true } : undefined,
  metadata: undefined,
});
const artifactText = (t: Task) => t.artifacts.flatMap((a) => a.parts.map((p) => (p.content?.$case === "text" ? p.content.value : ""))).join("");

const rpc = (agentId: string, key: string | null, body: unknown) =>
  call(`/agents/${agentId}/a2a`, { ...(key ? { key } : {}), body, headers: { "A2A-Version": "1.0" } });

describe("our agents as A2A agents", () => {
  it("serves a public card naming the bearer scheme; unknown and archived agents are 404", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const agent = await createAgent(auth, kb, { description: "Answers refund questions" });
    // The 1.0 card (without a version header it is the 0.3 card: test/a2a/compat.test.ts).
    const r = await call(`/agents/${agent.id}/a2a/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } });
    const card = expectStatus(r, 200);
    expect(card).toMatchObject({ name: "Refund helper", description: "Answers refund questions", version: "1" });
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${API}/agents/${agent.id}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" });
    expect(card.supportedInterfaces.map((i: any) => i.protocolVersion)).toContain("0.3");
    expect(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme).toBe("Bearer");
    expect(card.capabilities.streaming).toBe(true);
    expect(JSON.stringify(card)).not.toContain("$case");
    expect(JSON.stringify(card)).not.toContain(kb.id);
    expectError(await call(`/agents/agt_doesnotexist/a2a/.well-known/agent-card.json`), 404);
    const archived = await createAgent(auth, kb, { name: "Old" });
    expect((await call(`/agents/${archived.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/agents/${archived.id}/a2a/.well-known/agent-card.json`), 404);
    void org;
  });

  it("the JSON-RPC endpoint needs a key that may run the agent: 401 with WWW-Authenticate, 403 without query:rag, 404 out of reach", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const agent = await createAgent(auth, kb);
    const body = { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "run_x" } };
    const anon = await rpc(agent.id, null, body);
    expectError(anon, 401);
    expect(anon.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
    const reader = await createKey(org, { scopes: ["agents:read", "documents:read"] });
    expectError(await rpc(agent.id, reader.key, body), 403);
    const other = await createOrg();
    const otherKey = await createKey(other, { scopes: ["query:rag"] });
    expectError(await rpc(agent.id, otherKey.key, body), 404);
    const t2 = await createTenant(org);
    const elsewhere = await createKey(org, { scopes: ["query:rag"], tenant_ids: [t2.id] });
    expectError(await rpc(agent.id, elsewhere.key, body), 404);
    const runner = await createKey(org, { scopes: ["query:rag"] });
    const notFound = expectStatus(await rpc(agent.id, runner.key, body), 200);
    expect(notFound.error.code).toBe(-32001);
    // Malformed JSON-RPC: a protocol error, never a 5xx.
    expect([-32600, -32602]).toContain(expectStatus(await rpc(agent.id, runner.key, { hello: "world" }), 200).error.code);
    expect(expectStatus(await rpc(agent.id, runner.key, { jsonrpc: "2.0", id: 2, method: "NoSuchMethod", params: {} }), 200).error).toBeTruthy();
  });

  it("the SDK's client: SendMessage runs the agent (task = run, context = chat), GetTask reads it, a context continues the chat, streaming works", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const agent = await createAgent(auth, kb);
    const { key } = await createKey(org, { scopes: ["query:rag", "agents:read"] });
    const client = await clientFor(agent.id, key);
    expect(client.protocolVersion).toBe("1.0");

    const res = await client.sendMessage(send("How long do refunds take?"));
    expect("messageId" in res).toBe(false);
    const task = res as Task;
    expect(task.id).toMatch(/^run_/);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(task)).toMatch(/5 business days/);
    expect(task.artifacts[0].metadata?.sources?.length).toBeGreaterThan(0);

    // The task is a run of the agent, readable through the REST API too.
    const run = expectStatus(await call(`/agents/${agent.id}/runs/${task.id}`, { key }), 200);
    expect(run).toMatchObject({ status: "completed", trigger: "api", chat_id: task.contextId });

    const again = await client.getTask({ tenant: "", id: task.id });
    expect(again).toMatchObject({ id: task.id, contextId: task.contextId });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(again)).toMatch(/5 business days/);

    // Same context: the run continues the chat.
    const next = (await client.sendMessage(send("And can gift cards be refunded?", { contextId: task.contextId }))) as Task;
    expect(next.id).not.toBe(task.id);
    expect(next.contextId).toBe(task.contextId);
    const msgs = expectStatus(await call(`/chats/${task.contextId}/messages`, { key }), 200);
    expect(msgs.messages.filter((m: any) => m.role === "user")).toHaveLength(2);
    // A context that is not this caller's conversation of this agent is refused.
    await expect(client.sendMessage(send("Hi", { contextId: crypto.randomUUID() }))).rejects.toThrow(/not a conversation/);
    // A finished task takes no more input.
    await expect(client.sendMessage({ ...send("More?"), message: { ...message("More?"), taskId: task.id } })).rejects.toThrow(/cannot take more input/);

    // Streaming: the task, working, the answer as an artifact, and the final state.
    const kinds: string[] = [];
    let streamed = "";
    let last: number | undefined;
    for await (const ev of client.sendMessageStream(send("What are the support hours?"))) {
      const p = ev.payload!;
      kinds.push(p.$case);
      if (p.$case === "artifactUpdate") streamed = p.value.append ? streamed + (p.value.artifact?.parts[0].content as any).value : (p.value.artifact?.parts[0].content as any).value;
      if (p.$case === "statusUpdate") last = p.value.status?.state;
    }
    expect(kinds[0]).toBe("task");
    expect(kinds).toContain("artifactUpdate");
    expect(last).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(streamed).toMatch(/9:00/);
  });

  it("CancelTask stops a run in flight (it becomes cancelled); a finished task is not cancelable; other agents' tasks are not found", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const agent = await createAgent(auth, kb, { model: "test-gpt-slow" });
    const { key } = await createKey(org, { scopes: ["query:rag", "agents:read"] });
    const client = await clientFor(agent.id, key);
    const started = (await client.sendMessage(send("Tell me about refunds", { returnImmediately: true }))) as Task;
    expect(started.id).toMatch(/^run_/);
    expect(started.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const working = await client.getTask({ tenant: "", id: started.id });
    expect(working.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const cancelled = await client.cancelTask({ tenant: "", id: started.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: "", id: started.id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(expectStatus(await call(`/agents/${agent.id}/runs/${started.id}`, { key }), 200).status).toBe("cancelled");
    // Cancelling again answers the cancelled task.
    expect((await client.cancelTask({ tenant: "", id: started.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);

    const quick = await createAgent(auth, kb);
    const qc = await clientFor(quick.id, key);
    const done = (await qc.sendMessage(send("How long do refunds take?"))) as Task;
    await expect(qc.cancelTask({ tenant: "", id: done.id, metadata: undefined })).rejects.toThrow(/cannot be cancelled|not cancelable/i);
    // A run of another agent is not a task of this one.
    await expect(qc.getTask({ tenant: "", id: started.id })).rejects.toThrow(/not found/i);
  });

  it("speaks plain JSON-RPC (the README's curl) and the 0.3 method names (message/send, tasks/get, tasks/cancel)", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const agent = await createAgent(auth, kb);
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const raw = expectStatus(
      await rpc(agent.id, key, {
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "How long do refunds take?" }] } },
      }),
      200,
    );
    expect(raw.error, JSON.stringify(raw.error)).toBeUndefined();
    expect(raw.result.task).toMatchObject({ status: { state: "TASK_STATE_COMPLETED" } });
    expect(raw.result.task.artifacts[0].parts[0].text).toMatch(/5 business days/);
    const got1 = expectStatus(await rpc(agent.id, key, { jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: raw.result.task.id } }), 200);
    expect(got1.result).toMatchObject({ id: raw.result.task.id, status: { state: "TASK_STATE_COMPLETED" } });
    const sent = expectStatus(
      await call(`/agents/${agent.id}/a2a`, {
        key,
        body: {
          jsonrpc: "2.0",
          id: "a",
          method: "message/send",
          params: { message: { kind: "message", role: "user", messageId: crypto.randomUUID(), parts: [{ kind: "text", text: "How long do refunds take?" }] } },
        },
      }),
      200,
    );
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    expect(sent.result).toMatchObject({ kind: "task", status: { state: "completed" } });
    expect(sent.result.id).toMatch(/^run_/);
    expect(JSON.stringify(sent.result.artifacts)).toMatch(/5 business days/);
    const got = expectStatus(await call(`/agents/${agent.id}/a2a`, { key, body: { jsonrpc: "2.0", id: "b", method: "tasks/get", params: { id: sent.result.id } } }), 200);
    expect(got.result).toMatchObject({ id: sent.result.id, contextId: sent.result.contextId, status: { state: "completed" } });
    const cancel = expectStatus(await call(`/agents/${agent.id}/a2a`, { key, body: { jsonrpc: "2.0", id: "c", method: "tasks/cancel", params: { id: sent.result.id } } }), 200);
    expect(cancel.error).toBeTruthy();
    // message/stream: SSE of 0.3 events.
    const res = await fetchWorker(`${API}/agents/${agent.id}/a2a`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "d",
        method: "message/stream",
        params: { message: { kind: "message", role: "user", messageId: crypto.randomUUID(), parts: [{ kind: "text", text: "What are the support hours?" }] } },
      }),
    });
    expect(res.headers.get("Content-Type")).toMatch(/text\/event-stream/);
    const events = (await res.text())
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => JSON.parse(b.slice(6)));
    const kinds = events.map((e) => e.result?.kind);
    expect(kinds[0]).toBe("task");
    expect(kinds).toContain("artifact-update");
    expect(events.at(-1).result).toMatchObject({ kind: "status-update", status: { state: "completed" } });
  });
});

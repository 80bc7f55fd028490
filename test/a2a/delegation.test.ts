import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { a2aDelegates } from "../../src/services/a2a/delegate";
import type { DelegationOrigin } from "../../src/services/delegation/types";
import { call, createKb, expectError, expectStatus, testServer, unique } from "../helpers";
import { kbWithDocument, newChat, readSse, streamMessage } from "../chats/chat-helpers";
import { createAgent, runAgent } from "../agents/agent-helpers";
import { register } from "./a2a-helpers";

const HEADERS = JSON.stringify({ Authorization: "Bearer remote-secret-7f3a", "X-Team": "blue-falcon" });

/** What the local A2A agent received for requests whose body contains `needle`. */
async function received(needle: string): Promise<Array<{ headers: Record<string, string>; body: string }>> {
  const r = await fetch(`${testServer("a2a")}/__received?contains=${encodeURIComponent(needle)}`);
  return ((await r.json()) as { requests: Array<{ headers: Record<string, string>; body: string }> }).requests;
}

async function setup(cardPath = "/.well-known/agent-card.json", name = "Warranty oracle") {
  const { org, kb, auth } = await kbWithDocument();
  const reg = expectStatus(
    await register(auth, kb.id, { name, headers: HEADERS, metadata: JSON.stringify({ team: "support-7" }), cardUrl: `${testServer("a2a")}${cardPath}` }),
    201,
  );
  return { org, kb, auth, reg };
}

const originOf = (kb: { id: string; tenant_id: string }, org: { id: string; envId: string }, extra: Partial<DelegationOrigin> = {}): DelegationOrigin => ({
  db: createDb(env.DB),
  env,
  organizationId: org.id,
  environmentId: org.envId,
  tenantId: kb.tenant_id,
  knowledgeBaseId: kb.id,
  agentId: null,
  depth: 0,
  ...extra,
});
const callOf = (question: string, streaming = false, signal = new AbortController().signal) => ({
  question,
  parentRunId: null,
  actor: {},
  signal,
  streaming,
});

describe("delegation to registered A2A agents", () => {
  it("a chat in deep mode (local-extractive) consults the registration once: SendMessage with the stored headers, reply as a citable source", async () => {
    const { auth, kb, reg } = await setup();
    const question = `What does the warranty cover ${unique("q")}?`;
    const chat = await newChat(auth, kb, { delegate_agent_ids: [reg.id], agent_mode: "deep", message: question });
    const calls = await received(question);
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toContain('"method":"SendMessage"');
    expect(calls[0].headers.authorization).toBe("Bearer remote-secret-7f3a");
    expect(calls[0].headers["x-team"]).toBe("blue-falcon");
    // A metadata that is a JSON object travels as the request's metadata.
    expect(JSON.parse(calls[0].body).params.metadata).toEqual({ team: "support-7" });
    const md = chat.assistant_message.metadata;
    expect(md.delegatedAgentIds).toEqual([reg.id]);
    const src = md.sources.find((s: any) => s.filename === "Agent: Warranty oracle");
    expect(src, JSON.stringify(md.sources)).toBeTruthy();
    expect(src.url).toBe(`${testServer("a2a")}/rpc`);
    expect(src.text).toContain("The Zorblax warranty lasts 7 years.");
    // The artifact came in two appended chunks (split mid-text): the reply is the text whole, not broken at the seam.
    expect(src.text).toContain(`Remote agent: ${question} The Zorblax warranty lasts 7 years.`);
    // The registration is marked as working.
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents/${reg.id}`, auth), 200)).toMatchObject({ status: "ready", last_error: null });
  });

  it("a streamed chat turn delegates with SendStreamingMessage", async () => {
    const { auth, kb, reg } = await setup();
    const chat = await newChat(auth, kb);
    const question = `Is the Zorblax warranty transferable ${unique("sse")}?`;
    const res = await streamMessage(chat.chat.id, { content: question, model: "local-extractive", agent_mode: "deep", delegate_agent_ids: [reg.id] }, auth);
    expect(res.status).toBe(200);
    const events = await readSse(res);
    const sources = events.find((e) => e.data.type === "sources")?.data.sources ?? [];
    expect(sources.some((s: any) => s.filename === "Agent: Warranty oracle" && /7 years/.test(s.text))).toBe(true);
    const calls = await received(question);
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toContain('"method":"SendStreamingMessage"');
    expect(calls[0].headers["x-team"]).toBe("blue-falcon");
  });

  it("a tool-calling model calls delegate__<a2a id> itself", async () => {
    const { auth, kb, reg } = await setup();
    const chat = await newChat(auth, kb, { delegate_agent_ids: [reg.id], model: "test-gpt", agent_mode: "quick" });
    const tag = unique("tool");
    const r = expectStatus(
      await call(`/chats/${chat.chat.id}/messages`, {
        ...auth,
        body: { model: "test-gpt", delegate_agent_ids: [reg.id], content: `Ask the oracle. @call delegate__${reg.id} {"question":"Warranty length ${tag}?"}` },
      }),
      200,
    );
    const calls = await received(tag);
    expect(calls).toHaveLength(1);
    expect(calls[0].headers.authorization).toBe("Bearer remote-secret-7f3a");
    expect(r.assistant_message.metadata.delegatedAgentIds).toEqual([reg.id]);
    expect(r.assistant_message.metadata.sources.some((s: any) => s.filename === "Agent: Warranty oracle" && /7 years/.test(s.text))).toBe(true);
  });

  it("an agent run delegates to the registrations in a2a_agent_ids", async () => {
    const { auth, kb, reg } = await setup();
    const refused = expectError(await call("/agents", { ...auth, body: { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, name: "x", goal: "y", model: "local-extractive", a2a_agent_ids: ["a2a_nope"] } }), 400);
    expect(refused.details?.[0].path).toBe("body.a2a_agent_ids.0");
    const agent = await createAgent(auth, kb, { a2a_agent_ids: [reg.id], agent_mode: "deep" });
    expect(agent.a2a_agent_ids).toEqual([reg.id]);
    const question = `How long is the Zorblax warranty ${unique("run")}?`;
    const out = expectStatus(await runAgent(auth, agent.id, { content: question }), 200);
    expect(out.run.status).toBe("completed");
    const calls = await received(question);
    expect(calls).toHaveLength(1);
    expect(calls[0].headers.authorization).toBe("Bearer remote-secret-7f3a");
    expect(calls[0].headers["x-team"]).toBe("blue-falcon");
    expect(out.assistant_message.metadata.delegatedAgentIds).toEqual([reg.id]);
    expect(out.assistant_message.metadata.sources.some((s: any) => s.filename === "Agent: Warranty oracle")).toBe(true);
  });

  it("a registration serves only its own knowledge base (chats and agents elsewhere are refused with 400)", async () => {
    const { org, auth, kb, reg } = await setup();
    const kb2 = await createKb(org);
    const e = expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: kb2.tenant_id, knowledge_base_id: kb2.id, model: "local-extractive", delegate_agent_ids: [reg.id], message: "Hi?" } }), 400);
    expect(e.details?.[0].path).toBe("body.delegate_agent_ids.0");
    const a = expectError(await call("/agents", { ...auth, body: { tenant_id: kb2.tenant_id, knowledge_base_id: kb2.id, name: "x", goal: "y", model: "local-extractive", a2a_agent_ids: [reg.id] } }), 400);
    expect(a.details?.[0].path).toBe("body.a2a_agent_ids.0");
    // The resolver itself: unknown outside its knowledge base, refused for a delegate (one hop).
    expect(await a2aDelegates.resolve(originOf(kb2, org), reg.id)).toBeNull();
    expect(await a2aDelegates.resolve(originOf(kb, org), reg.id)).toMatchObject({ id: reg.id, name: "Warranty oracle" });
    const hop = await a2aDelegates.delegate(originOf(kb, org, { depth: 1 }), reg.id, callOf("Hi?"));
    expect(hop.isError).toBe(true);
    // Removed: the next call is an error result, not a failed turn.
    expect((await call(`/knowledge-bases/${kb.id}/a2a-agents/${reg.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const gone = await a2aDelegates.delegate(originOf(kb, org), reg.id, callOf("Hi?"));
    expect(gone).toMatchObject({ isError: true, delegatedAgentId: reg.id });
  });

  it("streams with SendStreamingMessage while the caller streams; a bare message reply works; 0.3 peers get message/send", async () => {
    const { org, kb, reg } = await setup();
    const q1 = `Streamed warranty question ${unique("s")}`;
    const streamed = await a2aDelegates.delegate(originOf(kb, org), reg.id, callOf(q1, true));
    expect(streamed.isError).toBeFalsy();
    expect(streamed.passage.text).toContain(`Remote agent: ${q1} The Zorblax warranty lasts 7 years.`);
    expect((await received(q1))[0].body).toContain('"method":"SendStreamingMessage"');

    const q2 = `plain reply please ${unique("p")}`;
    const plain = await a2aDelegates.delegate(originOf(kb, org), reg.id, callOf(q2));
    expect(plain.passage.text).toContain("7 years");

    const { org: o3, kb: kb3, reg: legacy } = await setup("/v03/.well-known/agent-card.json", "Legacy desk");
    const q3 = `Legacy question ${unique("l")}`;
    const old = await a2aDelegates.delegate(originOf(kb3, o3), legacy.id, callOf(q3));
    expect(old.isError, old.text).toBeFalsy();
    expect(old.passage).toMatchObject({ filename: "Agent: Legacy desk" });
    expect(old.passage.text).toContain("7 years");
    const calls = await received(q3);
    expect(calls[0].body).toContain('"method":"message/send"');
    expect(calls[0].headers.authorization).toBe("Bearer remote-secret-7f3a");
  });

  it("failures and timeouts are error results; the registration shows the last error", async () => {
    const { org, auth, kb, reg } = await setup();
    const failed = await a2aDelegates.delegate(originOf(kb, org), reg.id, callOf(`please explode ${unique("x")}`));
    expect(failed.isError).toBe(true);
    expect(failed.text).toMatch(/failed: The oracle exploded/);
    const shown = expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents/${reg.id}`, auth), 200);
    expect(shown.status).toBe("error");
    expect(shown.last_error).toMatch(/exploded/);

    // A limit of 1 s (A2A_TIMEOUT_MS) against an agent that takes 5 s.
    const slowEnv = { ...env, A2A_TIMEOUT_MS: "1000" };
    const timedOut = await a2aDelegates.delegate(originOf(kb, org, { env: slowEnv }), reg.id, callOf(`a slow question ${unique("t")}`));
    expect(timedOut.isError).toBe(true);
    expect(timedOut.text).toMatch(/did not answer within 1 s/);

    // The caller's abort signal (a stopped turn) ends the call too.
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const stopped = await a2aDelegates.delegate(originOf(kb, org), reg.id, callOf(`another slow one ${unique("c")}`, false, ac.signal));
    expect(stopped.isError).toBe(true);
    expect(stopped.text).toMatch(/cancelled/);

    // A good answer makes it ready again.
    const ok = await a2aDelegates.delegate(originOf(kb, org), reg.id, callOf(`fine ${unique("f")}`));
    expect(ok.isError).toBeFalsy();
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents/${reg.id}`, auth), 200).status).toBe("ready");
  });

  it("every URL of a call passes the guard: a card naming a private endpoint gives an error result", async () => {
    const { org, kb, reg } = await setup();
    // The stored card now points its interface at a private address (as a changed remote card could).
    const row = (await env.DB.prepare("SELECT card FROM a2a_agents WHERE id = ?").bind(reg.id).first<{ card: string }>())!;
    const card = JSON.parse(row.card);
    card.url = "http://10.1.2.3/rpc";
    card.raw.supportedInterfaces[0].url = "http://10.1.2.3/rpc";
    await env.DB.prepare("UPDATE a2a_agents SET card = ? WHERE id = ?").bind(JSON.stringify(card), reg.id).run();
    const r = await a2aDelegates.delegate(originOf(kb, org), reg.id, callOf("Anyone there?"));
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/private|only public/);
  });
});

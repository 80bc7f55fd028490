import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createKey, createTenant, expectError, expectStatus, unique } from "../helpers";
import { kbWithDocument, newChat, readSse, upstreamRequests } from "../chats/chat-helpers";
import { createAgent, runAgent, streamAgent } from "./agent-helpers";

describe("agent runs", () => {
  it("runs on demand: a completed run with its snapshot, chat, usage and an agent_run usage log", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb);
    const r = expectStatus(await runAgent(auth, a.id, { content: "How many days do customers have to request a refund?" }), 200);
    expect(Object.keys(r).sort()).toEqual(["assistant_message", "chat_id", "run", "usage"]);
    expect(r.assistant_message.content).toMatch(/30 days/);
    expect(r.run).toMatchObject({
      agent_id: a.id,
      agentVersion: 1,
      status: "completed",
      trigger: "api",
      scheduled_for: null,
      chat_id: r.chat_id,
      parent_run_id: null,
      error: null,
      message_id: r.assistant_message.id,
    });
    expect(r.run.usage).toEqual(r.usage);
    expect(r.run.output).toBe(r.assistant_message.content);
    expect(r.run.snapshot).toMatchObject({
      agentVersion: 1,
      goal: a.goal,
      instructions: a.instructions,
      model: "local-extractive",
      tools: { websearch_enable: false, delegate_agent_ids: [], mcp_server_ids: [], connector_slugs: [] },
      skills: [],
    });
    expect(r.run.started_at && r.run.ended_at).toBeTruthy();
    expect(expectStatus(await call(`/agents/${a.id}/runs/${r.run.id}`, auth), 200)).toEqual(r.run);

    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200).logs;
    const log = logs.find((l: any) => l.message_id === r.assistant_message.id);
    expect(log).toMatchObject({ operation: "agent_run", agent_run_id: r.run.id, chat_id: r.chat_id });

    // The run's chat is readable as a chat and continues with chat_id.
    const again = expectStatus(await runAgent(auth, a.id, { content: "When is support open?", chat_id: r.chat_id }), 200);
    expect(again.chat_id).toBe(r.chat_id);
    expect(again.run.id).not.toBe(r.run.id);
    const msgs = expectStatus(await call(`/chats/${r.chat_id}/messages`, auth), 200);
    expect(msgs.messages).toHaveLength(4);
  });

  it("lists runs with paging and a status filter; a run of another agent is not found", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb);
    const b = await createAgent(auth, kb);
    const r1 = expectStatus(await runAgent(auth, a.id, { content: "refund?" }), 200);
    const r2 = expectStatus(await runAgent(auth, a.id, { content: "shipping?" }), 200);
    const list = expectStatus(await call(`/agents/${a.id}/runs`, auth), 200);
    expect(list).toMatchObject({ total: 2, limit: 20, offset: 0 });
    expect(list.runs.map((x: any) => x.id).sort()).toEqual([r1.run.id, r2.run.id].sort());
    expect(expectStatus(await call(`/agents/${a.id}/runs?limit=1`, auth), 200).runs).toHaveLength(1);
    expect(expectStatus(await call(`/agents/${a.id}/runs?status=failed`, auth), 200).total).toBe(0);
    expect(expectStatus(await call(`/agents/${a.id}/runs?status=completed`, auth), 200).total).toBe(2);
    for (const q of ["limit=0", "limit=101", "status=done", "offset=-1"]) expectError(await call(`/agents/${a.id}/runs?${q}`, auth), 400);
    expectError(await call(`/agents/${b.id}/runs/${r1.run.id}`, auth), 404);
    expectError(await call(`/agents/${b.id}/runs/${r1.run.id}/stop`, { ...auth, method: "POST" }), 404);
    expectError(await call(`/agents/${a.id}/runs/run_nope`, auth), 404);
  });

  it("refuses other agents' chats (404), plain chats (404), terminated chats (409), other owners' chats (404), no credits (402)", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb);
    const b = await createAgent(auth, kb);
    const rb = expectStatus(await runAgent(auth, b.id, { content: "refund?" }), 200);
    expectError(await runAgent(auth, a.id, { content: "x", chat_id: rb.chat_id }), 404);
    const { chat } = await newChat(auth, kb);
    expectError(await runAgent(auth, a.id, { content: "x", chat_id: chat.id }), 404);
    const ra = expectStatus(await runAgent(auth, a.id, { content: "refund?" }), 200);
    expectStatus(await call(`/chats/${ra.chat_id}/terminate`, { ...auth, body: {} }), 200);
    expectError(await runAgent(auth, a.id, { content: "x", chat_id: ra.chat_id }), 409, "chat_terminated");

    // A key's run on behalf of an end user: the chat is that subject's.
    const key = await createKey(org, { scopes: ["query:rag"] });
    const rk = expectStatus(await runAgent({ key: key.key }, a.id, { content: "refund?", external_subject_id: "alice" }), 200);
    expectError(await runAgent({ key: key.key }, a.id, { content: "x", chat_id: rk.chat_id, external_subject_id: "bob" }), 404);
    expectError(await runAgent({ key: key.key }, a.id, { content: "x", chat_id: rk.chat_id }), 404);
    expectError(await runAgent(auth, a.id, { content: "x", chat_id: rk.chat_id }), 404);
    expectStatus(await runAgent({ key: key.key }, a.id, { content: "shipping?", chat_id: rk.chat_id, external_subject_id: "alice" }), 200);
    // Signed-in users never send external_subject_id.
    expectError(await runAgent(auth, a.id, { content: "x", external_subject_id: "alice" }), 400);
    expectError(await runAgent(auth, a.id, {}), 400);

    const poor = await createTenant(org, { credits_pool: 0 });
    const poorKb = expectStatus(await call("/knowledge-bases", { ...auth, body: { tenant_id: poor.id, name: "poor" } }), 201);
    const p = await createAgent(auth, poorKb);
    expectError(await runAgent(auth, p.id, { content: "hello" }), 402, "insufficient_credits");
    expect(expectStatus(await call(`/agents/${p.id}/runs`, auth), 200).total).toBe(0);
  });

  it("streams a run: X-Run-Id, run_id on user_message, the run on done", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb);
    const res = await streamAgent(auth, a.id, { content: "How many days do customers have to request a refund?" });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/text\/event-stream/);
    const runId = res.headers.get("X-Run-Id");
    expect(runId).toMatch(/^run_/);
    const events = (await readSse(res)).filter((e) => e.event !== "ping").map((e) => e.data);
    expect(events[0]).toMatchObject({ type: "user_message", run_id: runId });
    const done = events.find((e) => e.type === "done");
    expect(done.run).toMatchObject({ id: runId, status: "completed", agent_id: a.id });
    expect(done.run.output).toMatch(/30 days/);
    expect(events.at(-1).type).toBe("done");
    expect(expectStatus(await call(`/agents/${a.id}/runs/${runId}`, auth), 200).status).toBe("completed");
  });

  it("a run that fails mid-stream is failed and keeps its partial output and usage", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { model: "test-gpt-fail-mid-stream" });
    const r = expectStatus(await runAgent(auth, a.id, { content: "What does the refund policy say?" }), 200);
    expect(r.run.status).toBe("failed");
    expect(r.run.error.code).toBeTruthy();
    expect(r.run.output.length).toBeGreaterThan(0);
    expect(r.assistant_message.content).toBe(r.run.output);
    expect(r.run.usage.total_tokens).toBeGreaterThan(0);
    expect(r.assistant_message.metadata.sources.length).toBeGreaterThan(0);

    const res = await streamAgent(auth, a.id, { content: "What does the refund policy say?" });
    const events = (await readSse(res)).map((e) => e.data);
    const err = events.find((e) => e.type === "error");
    expect(err.run).toMatchObject({ status: "failed" });
    expect(err.run.output.length).toBeGreaterThan(0);
  });

  it("stop cancels a run in flight and keeps its partial output; stopping a finished run says stopped: false", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { model: "test-gpt-slow" });
    const res = await streamAgent(auth, a.id, { content: `What does the refund policy say? ${unique("n")}` });
    const runId = res.headers.get("X-Run-Id")!;
    let stop: any;
    const events = await readSse(res, async (e) => {
      if (!stop && e.data.type === "final_response" && !e.data.isComplete) {
        stop = expectStatus(await call(`/agents/${a.id}/runs/${runId}/stop`, { ...auth, method: "POST" }), 200);
      }
    });
    expect(stop.stopped).toBe(true);
    expect(stop.run.status).toBe("cancelled");
    const done = events.map((e) => e.data).find((e) => e.type === "done");
    expect(done.status).toBe("partial");
    const run = expectStatus(await call(`/agents/${a.id}/runs/${runId}`, auth), 200);
    expect(run.status).toBe("cancelled");
    expect(run.output.length).toBeGreaterThan(0);
    expect(run.usage).toBeTruthy();
    const again = expectStatus(await call(`/agents/${a.id}/runs/${runId}/stop`, { ...auth, method: "POST" }), 200);
    expect(again).toMatchObject({ stopped: false, run: { status: "cancelled" } });
  });

  it("pins its version: a deploy during a run does not touch it", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { model: "test-gpt-slow", goal: "Goal of version one" });
    const res = await streamAgent(auth, a.id, { content: `What does the refund policy say? ${unique("n")}` });
    const runId = res.headers.get("X-Run-Id")!;
    let deployed: any;
    const events = await readSse(res, async (e) => {
      if (!deployed && e.data.type === "final_response" && !e.data.isComplete) {
        deployed = expectStatus(await call(`/agents/${a.id}/deploy`, { ...auth, body: { goal: "Goal of version two", model: "local-extractive" } }), 200);
      }
    });
    expect(deployed.agentVersion).toBe(2);
    const done = events.map((e) => e.data).find((e) => e.type === "done");
    expect(done.run).toMatchObject({ id: runId, agentVersion: 1, status: "completed" });
    expect(done.run.snapshot).toMatchObject({ agentVersion: 1, goal: "Goal of version one", model: "test-gpt-slow" });
    const next = expectStatus(await runAgent(auth, a.id, { content: "refund?" }), 200);
    expect(next.run).toMatchObject({ agentVersion: 2, snapshot: { goal: "Goal of version two", model: "local-extractive" } });
  });

  it("skills: always bodies go into every run; auto loads offline by term overlap; edits apply without a new version", async () => {
    const { kb, auth } = await kbWithDocument();
    const nonce = unique("skillbody");
    const always = expectStatus(
      await call("/skills", { ...auth, body: { tenant_id: kb.tenant_id, name: "House style", description: "Formatting rules", body: `Always sign with ${nonce}` } }),
      201,
    );
    const auto = expectStatus(
      await call("/skills", {
        ...auth,
        body: { tenant_id: kb.tenant_id, name: "Refund checklist", description: "Steps for refund requests and refund policy questions", body: "Check the date." },
      }),
      201,
    );
    const skills = [
      { skill_id: always.id, mode: "always" },
      { skill_id: auto.id, mode: "auto" },
    ];
    const a = await createAgent(auth, kb, { skills });
    expect(a.skills).toEqual(skills);
    const matching = expectStatus(await runAgent(auth, a.id, { content: "How do refund requests work under the refund policy?" }), 200);
    const byName = (r: any) => Object.fromEntries(r.run.snapshot.skills.map((s: any) => [s.name, s]));
    expect(byName(matching)["House style"]).toMatchObject({ mode: "always", loaded: true, body: `Always sign with ${nonce}` });
    expect(byName(matching)["Refund checklist"]).toMatchObject({ mode: "auto", loaded: true, body: "Check the date." });
    const unrelated = expectStatus(await runAgent(auth, a.id, { content: "When is the support desk open?" }), 200);
    expect(byName(unrelated)["House style"].loaded).toBe(true);
    expect(byName(unrelated)["Refund checklist"].loaded).toBe(false);

    // Edits apply to later runs without a new version.
    expectStatus(await call(`/skills/${always.id}?tenant_id=${kb.tenant_id}`, { ...auth, method: "PATCH", body: { body: `Sign with ${nonce}-v2` } }), 200);
    const later = expectStatus(await runAgent(auth, a.id, { content: "support hours?" }), 200);
    expect(later.run.agentVersion).toBe(1);
    expect(byName(later)["House style"].body).toBe(`Sign with ${nonce}-v2`);

    // A provider model gets the always skill in its prompt.
    const g = await createAgent(auth, kb, { skills: [{ skill_id: always.id, mode: "always" }], model: "test-gpt" });
    expectStatus(await runAgent(auth, g.id, { content: "refund policy?" }), 200);
    expect(await upstreamRequests(`${nonce}-v2`)).toBeGreaterThan(0);

    // An archived skill is gone from later runs.
    expectStatus(await call(`/skills/${auto.id}?tenant_id=${kb.tenant_id}`, { ...auth, method: "DELETE" }), 204);
    const gone = expectStatus(await runAgent(auth, a.id, { content: "refund requests?" }), 200);
    expect(gone.run.snapshot.skills.map((s: any) => s.name)).toEqual(["House style"]);
  });

  it("a run's content belongs to its chat's owner: other members and keys do not see it", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const { addMember } = await import("../helpers");
    const a = await createAgent(auth, kb);
    const mine = expectStatus(await runAgent(auth, a.id, { content: "my private question about refunds" }), 200);
    const viewer = await addMember(org, "viewer");
    const theirs = expectStatus(await runAgent({ cookie: viewer.cookie }, a.id, { content: "the viewer's question" }), 200);
    const key = await createKey(org, { scopes: ["agents:read", "query:rag"] });
    const app = expectStatus(await runAgent({ key: key.key }, a.id, { content: "an end user's question", external_subject_id: "u1" }), 200);

    const ids = async (auth2: { cookie?: string; key?: string }) =>
      expectStatus(await call(`/agents/${a.id}/runs`, auth2), 200).runs.map((r: any) => r.id).sort();
    expect(await ids(auth)).toEqual([mine.run.id]);
    expect(await ids({ cookie: viewer.cookie })).toEqual([theirs.run.id]);
    expect(await ids({ key: key.key })).toEqual([app.run.id]);
    expectError(await call(`/agents/${a.id}/runs/${mine.run.id}`, { cookie: viewer.cookie }), 404);
    expectError(await call(`/agents/${a.id}/runs/${mine.run.id}`, { key: key.key }), 404);
    expectError(await call(`/agents/${a.id}/runs/${app.run.id}`, auth), 404);
    expectError(await call(`/agents/${a.id}/runs/${mine.run.id}/stop`, { cookie: viewer.cookie, method: "POST" }), 404);
    expectStatus(await call(`/agents/${a.id}/runs/${theirs.run.id}`, { cookie: viewer.cookie }), 200);
  });

  it("a provider model gets the pinned goal and instructions in its prompt", async () => {
    const { kb, auth } = await kbWithDocument();
    const goal = unique("goalnonce");
    const instr = unique("instrnonce");
    const a = await createAgent(auth, kb, { model: "test-gpt", goal: `Report on ${goal}`, instructions: `Mention ${instr}` });
    expectStatus(await runAgent(auth, a.id, { content: "What does the refund policy say?" }), 200);
    expect(await upstreamRequests(goal)).toBeGreaterThan(0);
    expect(await upstreamRequests(instr)).toBeGreaterThan(0);
  });

  it("usage logs of a run carry the run id", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb);
    const r = expectStatus(await runAgent(auth, a.id, { content: "refund?" }), 200);
    const row = await env.DB.prepare("SELECT operation, agent_run_id FROM usage_logs WHERE message_id = ?").bind(r.assistant_message.id).first();
    expect(row).toEqual({ operation: "agent_run", agent_run_id: r.run.id });
  });
});

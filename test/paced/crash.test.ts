import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CHECKPOINT_MS } from "../../src/services/answer/checkpoint";
import { runSupervisorNow } from "../../src/services/recovery/supervisor";
import { addMember, call, expectError, expectStatus } from "../helpers";
import { kbWithDocument, newChat, streamMessage, type SseEvent } from "../chats/chat-helpers";
import { createAgent, streamAgent } from "../agents/agent-helpers";

/**
 * Crash safety of turns (README "Crash safety"), paced so a crash lands mid-answer: the chat's Durable Object is
 * aborted (`ctx.abort()`, what a crash, a deploy or a reset does to it) while it streams, then the turn's lease is
 * rewound (its 30 s pass instantly) and the supervisor runs.
 */
const QUESTION = { content: "How many days do customers have to request a refund, and how are refunds paid?", model: "local-extractive", agent_mode: "deep" };

const chatStub = (chatId: string) => env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chatId));

/** Crashes the chat's Durable Object: everything it was doing stops, nothing of it runs on. */
async function crash(chatId: string) {
  await runInDurableObject(chatStub(chatId), (_, state) => state.abort("simulated crash")).catch(() => {});
}

/**
 * Reads SSE events until `n` partial answers arrived; returns them. The connection stays open (a client that
 * disconnected would stop the turn itself): the crash is what ends it.
 */
async function readPartials(res: Response, n: number): Promise<SseEvent[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffer = "";
  while (events.filter((e) => e.data.type === "final_response").length < n) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let i: number;
    while ((i = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      const line = block.split("\n").find((l) => l.startsWith("data: "));
      if (line) events.push({ event: "message", data: JSON.parse(line.slice(6)) } as SseEvent);
    }
  }
  reader.releaseLock();
  return events;
}

const rewindTurnLease = (chatId: string) =>
  env.DB.prepare("UPDATE chats SET turn_lease_expires_at = ? WHERE id = ? AND turn_lease_expires_at IS NOT NULL")
    .bind(new Date(Date.now() - 1000).toISOString(), chatId)
    .run();

async function ledger(tenantId: string) {
  const t = await env.DB.prepare("SELECT credits_used FROM tenants WHERE id = ?").bind(tenantId).first<{ credits_used: number }>();
  const logs = await env.DB.prepare("SELECT COALESCE(SUM(credits_used), 0) AS s, COUNT(*) AS n FROM usage_logs WHERE tenant_id = ?").bind(tenantId).first<{ s: number; n: number }>();
  return { used: t!.credits_used, logged: logs!.s, logs: logs!.n };
}

describe("a streamed answer cut by a crash", () => {
  it("keeps the text saved so far as a partial answer, charged for it exactly once", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const before = await ledger(kb.tenant_id);
    const res = await streamMessage(chat.id, QUESTION, auth);
    const seen = await readPartials(res, 12);
    const streamed = seen.filter((e) => e.data.type === "final_response").map((e) => e.data.content).join("");
    expect(streamed.length).toBeGreaterThan(20);
    // Let a checkpoint land (they are at most CHECKPOINT_MS apart), then crash.
    await new Promise((r) => setTimeout(r, CHECKPOINT_MS + 100));
    await crash(chat.id);

    // What the client would read right after the crash: the answer so far, charged.
    let msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200).messages;
    expect(msgs.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    const saved = msgs[1];
    expect(saved.metadata.status).toBe("partial");
    expect(saved.content.length).toBeGreaterThan(0);
    expect(streamed.startsWith(saved.content) || saved.content.startsWith(streamed)).toBe(true);
    expect(saved.metadata.usage.credits).toBeGreaterThan(0);
    const charged = await ledger(kb.tenant_id);
    expect(charged.logs).toBe(before.logs + 1);
    expect(charged.used).toBe(charged.logged);

    // The turn's lease lapses; the supervisor settles it: same text, same charge, no second charge.
    await rewindTurnLease(chat.id);
    await runSupervisorNow(env);
    await runSupervisorNow(env);
    msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200).messages;
    expect(msgs).toHaveLength(2);
    expect(msgs[1]).toMatchObject({ id: saved.id, content: saved.content, metadata: { status: "partial", usage: saved.metadata.usage } });
    const row = await env.DB.prepare("SELECT metadata FROM messages WHERE id = ?").bind(saved.id).first<{ metadata: string }>();
    expect(JSON.parse(row!.metadata)).toMatchObject({ stop_reason: "interrupted" });
    expect(JSON.parse(row!.metadata).in_progress).toBeUndefined();
    expect(await ledger(kb.tenant_id)).toEqual(charged);
    const turn = await env.DB.prepare("SELECT turn_message_id, turn_lease_expires_at FROM chats WHERE id = ?").bind(chat.id).first();
    expect(turn).toEqual({ turn_message_id: null, turn_lease_expires_at: null });

    // The chat goes on: a new turn answers in full.
    const next = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { ...QUESTION, agent_mode: "quick" } }), 200);
    expect(next.assistant_message.metadata.status).toBe("complete");
    const after = await ledger(kb.tenant_id);
    expect(after.logs).toBe(charged.logs + 1);
    expect(after.used).toBe(after.logged);
  });
});

/** Polls until the chat holds a checkpointed (in-progress) answer with some text. */
async function untilCheckpointed(chatId: string) {
  for (let i = 0; i < 100; i++) {
    const row = await env.DB.prepare("SELECT content FROM messages WHERE chat_id = ? AND role = 'assistant' AND json_extract(metadata, '$.in_progress') IS NOT NULL")
      .bind(chatId)
      .first<{ content: string }>();
    if (row && row.content.length > 10) return row.content;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no checkpoint");
}

describe("a retried POST /chats (same id, same first message)", () => {
  const create = (kb: { id: string; tenant_id: string }, id: string, message: string) => ({
    id,
    tenant_id: kb.tenant_id,
    knowledge_base_id: kb.id,
    model: "local-extractive",
    agent_mode: "quick",
    message,
  });

  it("after a crash mid-answer: returns the chat and its partial answer, charged once, instead of 409", async () => {
    const { kb, auth } = await kbWithDocument();
    const id = crypto.randomUUID();
    const body = create(kb, id, QUESTION.content);
    const first = call("/chats", { ...auth, body });
    await untilCheckpointed(id);
    await crash(id);
    expect((await first).status).toBeGreaterThanOrEqual(500); // the client lost its answer
    await rewindTurnLease(id);

    const retry = await call("/chats", { ...auth, body });
    const r = expectStatus(retry, 201);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(r.chat.id).toBe(id);
    expect(r.user_message.content).toBe(QUESTION.content);
    expect(r.assistant_message.metadata.status).toBe("partial");
    expect(r.assistant_message.content.length).toBeGreaterThan(0);
    expect(r.usage.credits).toBeGreaterThan(0);
    const msgs = expectStatus(await call(`/chats/${id}/messages`, auth), 200).messages;
    expect(msgs.map((m: any) => m.id)).toEqual([r.user_message.id, r.assistant_message.id]);
    const l = await ledger(kb.tenant_id);
    expect(l.logs).toBe(1);
    expect(l.used).toBe(l.logged);

    // Retried again: the same answer, still one turn and one charge.
    const again = expectStatus(await call("/chats", { ...auth, body }), 201);
    expect(again.assistant_message).toEqual(r.assistant_message);
    expect(await ledger(kb.tenant_id)).toEqual(l);
  });

  it("while the first request still runs: waits for it and returns the same answer; anything else with the id is 409", async () => {
    const org = await (await import("../helpers")).createOrg();
    const { kb, auth } = await kbWithDocument(org);
    const id = crypto.randomUUID();
    const body = create(kb, id, QUESTION.content);
    const first = call("/chats", { ...auth, body });
    await untilCheckpointed(id);
    const [a, b] = await Promise.all([first, call("/chats", { ...auth, body })]);
    const one = expectStatus(a, 201);
    const two = expectStatus(b, 201);
    expect(one.assistant_message.metadata.status).toBe("complete");
    expect(two.assistant_message).toEqual(one.assistant_message);
    expect(two.user_message).toEqual(one.user_message);
    expect((await ledger(kb.tenant_id)).logs).toBe(1);

    // Another first message, another member, or no message: the id is taken.
    expectError(await call("/chats", { ...auth, body: { ...body, message: "Something else?" } }), 409, "conflict");
    const other = await addMember(org, "developer");
    expectError(await call("/chats", { cookie: other.cookie, body }), 409, "conflict");
    const { message: _m, ...empty } = body;
    expectError(await call("/chats", { ...auth, body: empty }), 409, "conflict");
  });

  it("a create cut before its first turn started runs the turn on retry", async () => {
    const { kb, auth } = await kbWithDocument();
    const id = crypto.randomUUID();
    const body = create(kb, id, "How are refunds paid?");
    // The chat row exists with its first message recorded, but no turn ever started (the crash came in between).
    const { sha256Hex } = await import("../../src/lib/crypto");
    const r0 = expectStatus(await call("/chats", { ...auth, body: { ...body, id: crypto.randomUUID() } }), 201);
    await env.DB.prepare(
      `INSERT INTO chats (id, organization_id, environment_id, tenant_id, knowledge_base_id, model, owner_user_id, agent_mode, settings, created_at, updated_at)
       SELECT ?, organization_id, environment_id, tenant_id, knowledge_base_id, model, owner_user_id, agent_mode, ?, created_at, updated_at FROM chats WHERE id = ?`,
    )
      .bind(id, JSON.stringify({ first_message: { id: "msg_firstturnneverstarted0", sha256: await sha256Hex(body.message) } }), r0.chat.id)
      .run();
    const r = expectStatus(await call("/chats", { ...auth, body }), 201);
    expect(r.user_message.id).toBe("msg_firstturnneverstarted0");
    expect(r.assistant_message.metadata.status).toBe("complete");
    expect(r.assistant_message.content).toMatch(/refund/i);
  });
});

describe("an agent run cut by a crash", () => {
  it("is failed (interrupted) promptly, with the output produced so far and its usage", async () => {
    const { kb, auth } = await kbWithDocument();
    const agent = await createAgent(auth, kb, { agent_mode: "deep" });
    const res = await streamAgent(auth, agent.id, { content: QUESTION.content });
    const runId = res.headers.get("X-Run-Id")!;
    const seen = await readPartials(res, 10);
    const chatId = seen.find((e) => e.data.type === "user_message")!.data.message.chat_id as string;
    await untilCheckpointed(chatId);
    await crash(chatId);
    let run = expectStatus(await call(`/agents/${agent.id}/runs/${runId}`, auth), 200);
    expect(run.status).toBe("running");

    // Its turn's lease and its own lapse: the supervisor ends the run.
    await rewindTurnLease(chatId);
    await env.DB.prepare("UPDATE agent_runs SET lease_expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), runId).run();
    await runSupervisorNow(env);
    run = expectStatus(await call(`/agents/${agent.id}/runs/${runId}`, auth), 200);
    expect(run).toMatchObject({ status: "failed", error: { code: "interrupted" } });
    expect(run.output.length).toBeGreaterThan(0);
    expect(run.usage.credits).toBeGreaterThan(0);
    expect(run.ended_at).toBeTruthy();
    const l = await ledger(kb.tenant_id);
    expect(l.logs).toBe(1);
    expect(l.used).toBe(l.logged);
  });

  it("a run whose worker died before its turn started is failed (interrupted) once its lease lapses", async () => {
    const { kb, auth } = await kbWithDocument();
    const agent = await createAgent(auth, kb);
    const done = expectStatus(await call(`/agents/${agent.id}/messages`, { ...auth, body: { content: "How are refunds paid?" } }), 200);
    // A second run recorded as running, whose turn never started (the crash came in between).
    await env.DB.prepare(
      `INSERT INTO agent_runs (id, agent_id, organization_id, tenant_id, agent_version, status, trigger, chat_id, owner, started_at, created_at, lease_expires_at)
       SELECT 'run_diedbeforeturn00000', agent_id, organization_id, tenant_id, agent_version, 'running', 'api', chat_id, owner, ?1, ?1, ?2 FROM agent_runs WHERE id = ?3`,
    )
      .bind(new Date().toISOString(), new Date(Date.now() + 30_000).toISOString(), done.run.id)
      .run();
    await runSupervisorNow(env);
    expect(expectStatus(await call(`/agents/${agent.id}/runs/run_diedbeforeturn00000`, auth), 200).status).toBe("running");
    await env.DB.prepare("UPDATE agent_runs SET lease_expires_at = ? WHERE id = 'run_diedbeforeturn00000'").bind(new Date(Date.now() - 1000).toISOString()).run();
    await runSupervisorNow(env);
    const run = expectStatus(await call(`/agents/${agent.id}/runs/run_diedbeforeturn00000`, auth), 200);
    expect(run).toMatchObject({ status: "failed", error: { code: "interrupted" } });
  });
});

describe("leases of live work", () => {
  it("a streaming turn renews its lease as it checkpoints; the finished turn holds none", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const res = await streamMessage(chat.id, QUESTION, auth);
    await readPartials(res, 3);
    const lease = async () =>
      (await env.DB.prepare("SELECT turn_lease_expires_at AS at FROM chats WHERE id = ?").bind(chat.id).first<{ at: string | null }>())!.at;
    const first = await lease();
    expect(Date.parse(first!)).toBeGreaterThan(Date.now());
    await new Promise((r) => setTimeout(r, 700));
    expect(Date.parse((await lease())!)).toBeGreaterThan(Date.parse(first!));
    expectStatus(await call(`/chats/${chat.id}/stop`, { ...auth, method: "POST" }), 200);
    expect(await lease()).toBeNull();
  });

  it("a heartbeat beats until it is stopped, never overlapping itself", async () => {
    const { heartbeat } = await import("../../src/services/recovery/leases");
    let beats = 0;
    let running = 0;
    let overlapped = false;
    const stop = heartbeat("test", 20, async () => {
      if (running++) overlapped = true;
      beats++;
      await new Promise((r) => setTimeout(r, 50));
      running--;
    });
    await new Promise((r) => setTimeout(r, 300));
    stop();
    const after = beats;
    expect(after).toBeGreaterThanOrEqual(3);
    expect(overlapped).toBe(false);
    await new Promise((r) => setTimeout(r, 150));
    expect(beats).toBe(after);
  });
});

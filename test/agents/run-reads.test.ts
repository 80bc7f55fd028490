import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDb } from "../../src/db/client";
import { withSimulatedDistance } from "../../src/db/distance";
import { getAgent } from "../../src/services/agents/agents";
import { readRunState } from "../../src/services/agents/run-reads";
import { finishRun, getRun, startRun } from "../../src/services/agents/runs";
import { getChat, listMessages } from "../../src/services/chats/chats";
import { call, expectStatus } from "../helpers";
import { kbWithDocument } from "../chats/chat-helpers";
import { createAgent } from "./agent-helpers";

/**
 * A run's bookkeeping in few D1 round trips (README "Latency"): counted with the benchmark's trace
 * (SIMULATED_HOPS_TRACE, src/db/distance.ts), which logs one line per round trip.
 */
const traced = () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const db = createDb(withSimulatedDistance(env.DB, undefined, "1"));
  const trips = () => log.mock.calls.filter((c) => String(c[0]).startsWith("[hop] d1 ")).length;
  return { db, trips, reset: () => log.mockClear() };
};

afterEach(() => vi.restoreAllMocks());

async function agentWithSkills() {
  const { org, kb, auth } = await kbWithDocument();
  const skill = (name: string) =>
    call("/skills", { ...auth, body: { tenant_id: kb.tenant_id, name, description: `${name} rules`, body: `Body of ${name}` } }).then((r) => expectStatus(r, 201));
  const kept = await skill("House style");
  const gone = await skill("Old style");
  const a = await createAgent(auth, kb, { skills: [{ skill_id: kept.id, mode: "always" }, { skill_id: gone.id, mode: "always" }] });
  expect((await call(`/skills/${gone.id}?tenant_id=${kb.tenant_id}`, { ...auth, method: "DELETE" })).status).toBe(204);
  return { org, kb, auth, agentId: a.id as string };
}

describe("a run's reads and writes in one round trip each", () => {
  it("reads the run's state in one batch and starts a run (chat, history, run) in one more; the command carries the new chat and its transcript end", async () => {
    const { org, agentId } = await agentWithSkills();
    const { db, trips, reset } = traced();
    const agent = (await getAgent(db, agentId))!;
    reset();
    const state = await readRunState(db, agent, null);
    expect(trips()).toBe(1);
    expect(state.kb?.id).toBe(agent.knowledgeBaseId);
    expect(state.tenant).toMatchObject({ pool: expect.any(Number), used: expect.any(Number) });
    expect(state.reads.skills.map((s) => s.name)).toEqual(["House style"]);
    expect(state.reads).toMatchObject({ transcript: undefined, tabular: false });

    reset();
    const owner = { userId: org.owner.id, apiKeyId: null, externalSubjectId: null };
    const start = (history: Array<{ role: "user" | "assistant"; content: string }>) =>
      startRun(db, {
        agent, kb: state.kb!, trigger: "api", content: "How long do refunds take?", actor: { userId: org.owner.id }, subject: `user:${org.owner.id}`,
        chat: null, owner, stream: false, history, reads: state.reads,
      });
    const { run, chat, cmd } = await start([]);
    expect(trips()).toBe(1);
    // What the batch wrote: the chat as the command carries it, the run naming the chat.
    expect(await getChat(db, chat.id)).toEqual(chat);
    expect(await getRun(db, run.id)).toEqual(run);
    expect(run).toMatchObject({ status: "running", chatId: chat.id, agentVersion: agent.agentVersion });
    expect(run.snapshot?.skills.map((s) => [s.name, s.loaded])).toEqual([["House style", true]]);
    // The chat's Durable Object needs to read neither the chat nor its transcript's end.
    expect(cmd).toMatchObject({ chatId: chat.id, chat: { id: chat.id }, transcript: { maxSeq: 0, count: 0 }, tabular: false, runId: run.id });

    // With a history (the OpenAI-compatible calls): written in the same batch, in order; the object reads the chat.
    reset();
    const seeded = await start([
      { role: "user", content: "Earlier question" },
      { role: "assistant", content: "Earlier answer" },
    ]);
    expect(trips()).toBe(1);
    expect((await listMessages(db, seeded.chat.id, { limit: 10, offset: 0 })).rows.map((m) => [m.seq, m.role, m.content])).toEqual([
      [1, "user", "Earlier question"],
      [2, "assistant", "Earlier answer"],
    ]);
    expect(await getRun(db, seeded.run.id)).toEqual(seeded.run);
    expect(seeded.cmd.chat).toBeUndefined();
    expect(seeded.cmd.transcript).toBeUndefined();

    // A continued chat: its transcript's end is read with the rest.
    const again = await readRunState(db, agent, seeded.chat.id.toUpperCase());
    expect(again.chat).toMatchObject({ id: seeded.chat.id, messageCount: 2 });
    expect(again.reads.transcript).toEqual({ maxSeq: 2, count: 2 });

    // The run's end: its row, the usage logs and the row read back, in one round trip.
    reset();
    const done = await finishRun(db, run.id, { status: "complete", usage: null, messageId: "msg_none", content: "Five days." });
    expect(trips()).toBe(1);
    expect(done).toMatchObject({ id: run.id, status: "completed", output: "Five days.", messageId: "msg_none", errorCode: null });
    expect(done!.endedAt).toBeTruthy();
    // Idempotent: a second end changes neither the status nor the end time.
    const twice = await finishRun(db, run.id, { status: "error", error: { code: "x", message: "y" }, usage: null, messageId: null, content: null });
    expect(twice).toMatchObject({ status: "completed", errorCode: null, output: "Five days.", endedAt: done!.endedAt });
  });

  it("A2A SendMessage reads the agent with its run's state: the run pins the agent's active skills, as POST /agents/:id/messages does", async () => {
    const { auth, agentId } = await agentWithSkills();
    const body = (text: string, contextId?: string) => ({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...(contextId ? { contextId } : {}) } },
    });
    const send = (text: string, contextId?: string) =>
      call(`/agents/${agentId}/a2a`, { ...auth, body: body(text, contextId), headers: { "A2A-Version": "1.0" } }).then((r) => expectStatus(r, 200).result.task);
    const task = await send("How long do refunds take?");
    const viaA2a = expectStatus(await call(`/agents/${agentId}/runs/${task.id}`, auth), 200);
    const viaRest = expectStatus(await call(`/agents/${agentId}/messages`, { ...auth, body: { content: "How long do refunds take?" } }), 200).run;
    expect(viaA2a.status).toBe("completed");
    expect(viaA2a.snapshot.skills).toEqual(viaRest.snapshot.skills);
    expect(viaA2a.snapshot.skills.map((s: any) => [s.name, s.loaded])).toEqual([["House style", true]]);
    // A context continues its chat (its state read with the agent).
    const next = await send("And gift cards?", task.contextId);
    expect(next.contextId).toBe(task.contextId);
    const msgs = expectStatus(await call(`/chats/${task.contextId}/messages`, auth), 200).messages;
    expect(msgs.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });
});

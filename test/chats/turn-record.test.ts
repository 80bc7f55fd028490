import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { openDb } from "../../src/db/client";
import { RECORD_GRACE_MS, startTurnRecord } from "../../src/services/answer/turn-record";
import type { TurnDeps, TurnRequest } from "../../src/services/answer/context";
import { LOCAL_MODEL_ID, type ModelInfo } from "../../src/services/models/registry";
import { call, expectStatus } from "../helpers";
import { kbWithDocument, newChat } from "./chat-helpers";

/**
 * A turn's record (src/services/answer/turn-record.ts): the user message's write with the turn's lease. A quick
 * answer of the offline model waits on nothing outside the service, so its record waits for the final write (one
 * D1 call per answer instead of two); any other turn writes it at once, and a waiting record is written when
 * something needs it or once the turn has run for RECORD_GRACE_MS.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function setup(model: string, mode: "quick" | "deep") {
  const { kb, auth } = await kbWithDocument();
  const { chat } = await newChat(auth, kb);
  const row = await env.DB.prepare("SELECT * FROM chats WHERE id = ?").bind(chat.id).first();
  const req = {
    chat: { id: chat.id, ...row },
    content: "Where is the warehouse?",
    model: { id: model } as ModelInfo,
    mode,
    known: { nextSeq: 1, count: 0, emptyHistory: true },
  } as unknown as TurnRequest;
  const deps = { db: openDb(env) } as TurnDeps;
  const state = async () => ({
    messages: (await env.DB.prepare("SELECT id FROM messages WHERE chat_id = ?").bind(chat.id).all()).results.length,
    lease: (await env.DB.prepare("SELECT turn_message_id FROM chats WHERE id = ?").bind(chat.id).first("turn_message_id")) as string | null,
  });
  return { deps, req, state, chat, auth };
}
const answerId = () => `msg_${crypto.randomUUID().replace(/-/g, "")}`;

describe("a turn's record", () => {
  it("of a quick offline answer waits: nothing is written until something needs it, then the message and the lease", async () => {
    const { deps, req, state } = await setup(LOCAL_MODEL_ID, "quick");
    const id = answerId();
    const record = await startTurnRecord(deps, req, id);
    await sleep(50);
    expect(await state()).toEqual({ messages: 0, lease: null });
    const written = await record.written(); // a checkpoint needs it
    expect(written).toMatchObject({ id: record.announced.id, seq: 1, role: "user" });
    expect(await state()).toEqual({ messages: 1, lease: id });
  });

  it("of a quick offline answer is left to the final write when the answer is done first, and never written after", async () => {
    const { deps, req, state } = await setup(LOCAL_MODEL_ID, "quick");
    const record = await startTurnRecord(deps, req, answerId());
    expect(record.toAppend()).toEqual(record.announced); // the final write appends it
    await record.written(); // too late to start a write of its own
    await sleep(RECORD_GRACE_MS + 100);
    expect(await state()).toEqual({ messages: 0, lease: null });
  });

  it("of a quick offline answer that runs longer than the grace is written anyway", async () => {
    const { deps, req, state } = await setup(LOCAL_MODEL_ID, "quick");
    const id = answerId();
    await startTurnRecord(deps, req, id);
    await sleep(RECORD_GRACE_MS + 200);
    expect(await state()).toEqual({ messages: 1, lease: id });
  });

  for (const [model, mode] of [["test-gpt", "quick"], [LOCAL_MODEL_ID, "deep"]] as const) {
    it(`of a ${mode} answer of ${model} is written at once`, async () => {
      const { deps, req, state } = await setup(model, mode);
      const id = answerId();
      await startTurnRecord(deps, req, id);
      await sleep(100);
      expect(await state()).toEqual({ messages: 1, lease: id });
    });
  }

  it("a quick offline answer through the API records both messages in order with no turn left open", async () => {
    const { chat, auth, state } = await setup(LOCAL_MODEL_ID, "quick");
    for (const q of ["When is the support desk open?", "How are refunds paid?"]) {
      const r = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: q, model: LOCAL_MODEL_ID, agent_mode: "quick" } }), 200);
      expect(r.user_message.content).toBe(q);
    }
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200).messages;
    expect(msgs.map((m: { role: string; seq?: number }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect((await state()).lease).toBeNull();
  });
});

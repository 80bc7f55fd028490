import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { call, createOrg, createTenant, expectStatus, testServer, type Auth } from "../helpers";
import { db, memoryKb, memoryTurn, setMemorySettings } from "./memory-helpers";

/**
 * Memory inside turns, through the toolbox contract: the context provider and
 * after-turn hook called as the loop calls them (test/memory/e2e.test.ts runs
 * the same through POST /chats once the loop calls them).
 */

async function durableOrg(retention: "none" | "explicit_only" | "automatic" = "explicit_only") {
  const org = await createOrg();
  await setMemorySettings(org, { mode: "durable", retention });
  const kb = await memoryKb(org, "subject");
  return { org, kb, auth: { cookie: org.owner.cookie } as Auth };
}

async function memoriesOf(tenantId: string) {
  return db().all<{ id: string; subject_id: string; content: string; knowledge_base_id: string | null; source_chat_id: string; source_message_id: string | null; kind: string }>(
    sql`SELECT id, subject_id, content, knowledge_base_id, source_chat_id, source_message_id, kind FROM memories WHERE tenant_id = ${tenantId} ORDER BY seq`,
  );
}

describe("explicit_only", () => {
  it("remembers on request, recalls in a new chat for the same subject only, and announces the write", async () => {
    const { org, kb, auth } = await durableOrg();
    const first = await memoryTurn(auth, kb, "ext:alice", "Remember that my project code is ZEBRA-42");
    expect(first.gathered?.thought).toBe("Remembered: My project code is ZEBRA-42.");
    // The same turn cites what it stored, so the answer acknowledges it.
    expect(first.gathered?.passages.map((p) => p.text)).toEqual(["You told me: My project code is ZEBRA-42."]);
    const [m] = await memoriesOf(org.tenantId);
    expect(m).toMatchObject({ subject_id: "ext:alice", knowledge_base_id: null, source_chat_id: first.chatId, source_message_id: first.userMessageId, kind: "fact" });

    const again = await memoryTurn(auth, kb, "ext:alice", "What is my project code?");
    expect(again.chatId).not.toBe(first.chatId);
    expect(again.gathered?.passages).toHaveLength(1);
    expect(again.gathered?.passages[0]).toMatchObject({ document_id: null, filename: "Memory", memory_id: m.id, chunk_id: null });
    expect(again.gathered?.passages[0].text).toContain("ZEBRA-42");
    expect(again.gathered?.metadata).toEqual({ memoryUsed: true, memory_ids: [m.id] });
    expect(again.gathered?.thought).toBeUndefined();

    const bob = await memoryTurn(auth, kb, "ext:bob", "What is my project code?");
    expect(bob.gathered?.passages).toEqual([]);
    expect(bob.gathered?.metadata).toEqual({ memoryUsed: false, memory_ids: [] });
    const alsoNotUser = await memoryTurn(auth, kb, `user:${org.owner.id}`, "What is my project code?");
    expect(alsoNotUser.gathered?.passages).toEqual([]);
  });

  it("stores nothing from ordinary statements, and the after-turn hook extracts nothing", async () => {
    const { org, kb, auth } = await durableOrg("explicit_only");
    const t = await memoryTurn(auth, kb, "ext:a", "My favourite colour is green. I work at Acme Corp.");
    expect(t.gathered?.thought).toBeUndefined();
    expect(t.events).toEqual([]);
    expect(await memoriesOf(org.tenantId)).toEqual([]);
  });

  it("accepts the usual phrasings of a request to remember", async () => {
    const { org, kb, auth } = await durableOrg();
    for (const m of [
      "Please note that my manager is Dana Scully.",
      "Don't forget: I prefer answers in French",
      "Can you remember that my locker number is 815?",
      "OK. Keep in mind that always cite the policy number",
    ]) {
      await memoryTurn(auth, kb, "ext:p", m);
    }
    const rows = await memoriesOf(org.tenantId);
    expect(rows.map((r) => [r.content, r.kind])).toEqual([
      ["My manager is Dana Scully.", "fact"],
      ["I prefer answers in French.", "preference"],
      ["My locker number is 815.", "fact"],
      ["Always cite the policy number.", "instruction"],
    ]);
  });

  it("updates a restated memory in place instead of duplicating it", async () => {
    const { org, kb, auth } = await durableOrg();
    await memoryTurn(auth, kb, "ext:a", "Remember that my project code is ZEBRA-42");
    const [before] = await memoriesOf(org.tenantId);
    const t = await memoryTurn(auth, kb, "ext:a", "Remember that my project code is KOALA-7");
    expect(t.gathered?.thought).toBe("Updated memory: My project code is KOALA-7.");
    await memoryTurn(auth, kb, "ext:a", "remember that My project code is KOALA-7!");
    const after = await memoriesOf(org.tenantId);
    expect(after).toHaveLength(1);
    expect(after[0].id).toBe(before.id);
    expect(after[0].content).toBe("My project code is KOALA-7.");
    expect(after[0].source_chat_id).not.toBe(before.source_chat_id);
    // Another subject stating the same keeps its own memory.
    await memoryTurn(auth, kb, "ext:b", "Remember that my project code is KOALA-7");
    expect(await memoriesOf(org.tenantId)).toHaveLength(2);
  });

  it("forgets what the user asks to forget, and only the subject's own", async () => {
    const { org, kb, auth } = await durableOrg();
    await memoryTurn(auth, kb, "ext:a", "Remember that my project code is ZEBRA-42");
    await memoryTurn(auth, kb, "ext:a", "Remember that my dentist is Dr. Alvarez");
    await memoryTurn(auth, kb, "ext:b", "Remember that my project code is ZEBRA-42");
    const t = await memoryTurn(auth, kb, "ext:a", "Please forget my project code.");
    expect(t.gathered?.thought).toBe("Forgot: My project code is ZEBRA-42.");
    expect(t.gathered?.passages.map((p) => p.text)).not.toContain("You told me: My project code is ZEBRA-42.");
    const rows = await memoriesOf(org.tenantId);
    expect(rows.map((r) => `${r.subject_id} ${r.content}`)).toEqual(["ext:a My dentist is Dr. Alvarez.", "ext:b My project code is ZEBRA-42."]);
    const none = await memoryTurn(auth, kb, "ext:a", "forget about my car");
    expect(none.gathered?.thought).toBe('Nothing remembered matches "my car"');
  });
});

describe("retention none and automatic", () => {
  it("none stores nothing new but still recalls and forgets", async () => {
    const { org, kb, auth } = await durableOrg("explicit_only");
    await memoryTurn(auth, kb, "ext:a", "Remember that my project code is ZEBRA-42");
    await setMemorySettings(org, { retention: "none" });
    const t = await memoryTurn(auth, kb, "ext:a", "Remember that my badge is 77. What is my project code?");
    expect(t.gathered?.thought).toBe("Not remembered: memory retention is off for this tenant");
    expect((await memoriesOf(org.tenantId)).map((r) => r.content)).toEqual(["My project code is ZEBRA-42."]);
    const q = await memoryTurn(auth, kb, "ext:a", "What is my project code?");
    expect(q.gathered?.metadata?.memoryUsed).toBe(true);
  });

  it("automatic with local-extractive extracts durable statements by rule from the user's message, free", async () => {
    const { org, kb, auth } = await durableOrg("automatic");
    const t = await memoryTurn(auth, kb, "ext:a", "I work at Acme Corp. My project code is ZEBRA-42. What is the refund policy?");
    expect(t.events).toEqual([
      { type: "agent_thought", content: "Remembered: I work at Acme Corp." },
      { type: "agent_thought", content: "Remembered: My project code is ZEBRA-42." },
    ]);
    const rows = await memoriesOf(org.tenantId);
    expect(rows.every((r) => r.source_message_id === t.userMessageId)).toBe(true);
    // Nothing from the answer or the recalled memories: a question alone adds nothing.
    const q = await memoryTurn(auth, kb, "ext:a", "Where do I work?");
    expect(q.gathered?.passages.map((p) => p.text)).toEqual(["You told me: I work at Acme Corp."]);
    expect(q.events).toEqual([]);
    expect(await memoriesOf(org.tenantId)).toHaveLength(2);
    const logs = await db().all<{ n: number }>(sql`SELECT count(*) AS n FROM usage_logs WHERE tenant_id = ${org.tenantId} AND operation = 'memory'`);
    expect(logs[0].n).toBe(0);
  });

  it("automatic with a provider model: one structured-output call per turn, metered as memory", async () => {
    const { org, kb, auth } = await durableOrg("automatic");
    const marker = `Quokka${Date.now()}`;
    const t = await memoryTurn(auth, kb, "ext:a", `My team mascot is ${marker}. I prefer short answers.`, { model: "test-gpt" });
    expect(t.events.map((e) => (e as any).content)).toEqual([`Remembered: My team mascot is ${marker}.`, "Remembered: I prefer short answers."]);
    const calls = await fetch(`${testServer("openai")}/__requests?contains=${encodeURIComponent(`memory_extraction`)}`).then((r) => r.json() as Promise<{ count: number }>);
    expect(calls.count).toBeGreaterThanOrEqual(1);
    const mine = await fetch(`${testServer("openai")}/__requests?contains=${encodeURIComponent(`<user_message>\\nMy team mascot is ${marker}`)}`).then((r) => r.json() as Promise<{ count: number }>);
    // Exactly one extraction call for the turn.
    expect(mine.count).toBe(1);
    const logs = await db().all<{ operation: string; model: string; chat_id: string; credits_used: number; input_tokens: number }>(
      sql`SELECT operation, model, chat_id, credits_used, input_tokens FROM usage_logs WHERE tenant_id = ${org.tenantId} AND operation = 'memory'`,
    );
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ operation: "memory", model: "test-gpt", chat_id: t.chatId });
    expect(logs[0].credits_used).toBeGreaterThan(0);
    const rows = await memoriesOf(org.tenantId);
    expect(rows.map((r) => r.kind)).toEqual(["fact", "preference"]);
    // The graph comes from the model's entities and relations.
    const g = expectStatus(await call(`/tenants/${org.tenantId}/memories/graph`, auth), 200);
    expect(g.nodes.map((n: any) => n.name).sort()).toEqual([marker, "User"].sort());
    expect(g.edges).toHaveLength(1);
    expect(g.edges[0]).toMatchObject({ relation: "mentions" });

    // A question alone is not worth a model call.
    const before = (await fetch(`${testServer("openai")}/__requests?contains=memory_extraction`).then((r) => r.json() as Promise<{ count: number }>)).count;
    await memoryTurn(auth, kb, "ext:a", "What is our mascot?", { model: "test-gpt" });
    const after = (await fetch(`${testServer("openai")}/__requests?contains=memory_extraction`).then((r) => r.json() as Promise<{ count: number }>)).count;
    expect(after).toBe(before);
  });
});

describe("which memory a turn uses", () => {
  it("subject mode uses durable memory only while the tenant's mode is durable", async () => {
    const { org, kb, auth } = await durableOrg();
    await memoryTurn(auth, kb, "ext:a", "Remember that my project code is ZEBRA-42");
    await setMemorySettings(org, { mode: "disabled" });
    const t = await memoryTurn(auth, kb, "ext:a", "What is my project code?");
    expect(t.gathered).toBeNull();
    const off = await memoryKb(org, "disabled");
    await setMemorySettings(org, { mode: "durable" });
    expect((await memoryTurn(auth, off, "ext:a", "What is my project code?")).gathered).toBeNull();
  });

  it("kb_restricted keeps memories under their knowledge base, whatever the tenant's mode", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kbA = await memoryKb(org, "kb_restricted");
    const kbB = await memoryKb(org, "kb_restricted");
    const durable = await memoryKb(org, "subject");
    await memoryTurn(auth, kbA, "ext:a", "Remember that my project code is ZEBRA-42");
    const [m] = await memoriesOf(org.tenantId);
    expect(m.knowledge_base_id).toBe(kbA.id);
    expect((await memoryTurn(auth, kbA, "ext:a", "What is my project code?")).gathered?.metadata?.memoryUsed).toBe(true);
    expect((await memoryTurn(auth, kbB, "ext:a", "What is my project code?")).gathered?.metadata?.memoryUsed).toBe(false);
    await setMemorySettings(org, { mode: "durable" });
    expect((await memoryTurn(auth, durable, "ext:a", "What is my project code?")).gathered?.metadata?.memoryUsed).toBe(false);
  });

  it("tenants are separate memory spaces", async () => {
    const org = await createOrg();
    const other = await createTenant(org, { credits_pool: 100 });
    await setMemorySettings(org, { mode: "durable" });
    await setMemorySettings(org, { mode: "durable" }, other.id);
    const auth = { cookie: org.owner.cookie };
    const kb1 = await memoryKb(org, "subject");
    const kb2 = await memoryKb(org, "subject", other.id);
    await memoryTurn(auth, kb1, "ext:a", "Remember that my project code is ZEBRA-42");
    expect((await memoryTurn(auth, kb2, "ext:a", "What is my project code?")).gathered?.metadata?.memoryUsed).toBe(false);
  });
});

describe("ownership", () => {
  it("deleting the source chat deletes its memories, their edges and orphaned nodes", async () => {
    const { org, kb, auth } = await durableOrg();
    const t = await memoryTurn(auth, kb, "ext:a", "Remember that my project code is ZEBRA-42");
    await memoryTurn(auth, kb, "ext:a", "Remember that my dentist is Dr. Alvarez");
    expectStatus(await call(`/chats/${t.chatId}`, { ...auth, method: "DELETE" }), 204);
    expect((await memoriesOf(org.tenantId)).map((r) => r.content)).toEqual(["My dentist is Dr. Alvarez."]);
    const names = await db().all<{ name: string }>(sql`SELECT name FROM memory_entities WHERE tenant_id = ${org.tenantId} ORDER BY name`);
    expect(names.map((n) => n.name)).toEqual(["Dr. Alvarez", "User"]);
    const fts = await db().all<{ n: number }>(sql`SELECT count(*) AS n FROM memories_fts WHERE memories_fts MATCH 'zebra' AND rowid NOT IN (SELECT seq FROM memories)`);
    expect(fts[0].n).toBe(0);
  });

  it("deleting a knowledge base, a tenant or the organization removes what it owns", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await memoryKb(org, "kb_restricted");
    await memoryTurn(auth, kb, "ext:a", "Remember that my project code is ZEBRA-42");
    expectStatus(await call(`/knowledge-bases/${kb.id}`, { ...auth, method: "DELETE" }), 204);
    expect(await memoriesOf(org.tenantId)).toEqual([]);
    const t = await createTenant(org, { credits_pool: 100 });
    await setMemorySettings(org, { mode: "durable" }, t.id);
    const kb2 = await memoryKb(org, "subject", t.id);
    await memoryTurn(auth, kb2, "ext:a", "Remember that my project code is ZEBRA-42");
    expect(await memoriesOf(t.id)).toHaveLength(1);
    expectStatus(await call(`/tenants/${t.id}`, { ...auth, method: "DELETE" }), 204);
    expect(await memoriesOf(t.id)).toEqual([]);
    const left = await db().all<{ n: number }>(sql`SELECT (SELECT count(*) FROM memory_entities WHERE tenant_id = ${t.id}) + (SELECT count(*) FROM tenant_memory_settings WHERE tenant_id = ${t.id}) AS n`);
    expect(left[0].n).toBe(0);

    // The organization: everything of every tenant.
    await setMemorySettings(org, { mode: "durable" });
    const kb3 = await memoryKb(org, "subject");
    await memoryTurn(auth, kb3, "ext:a", "Remember that my project code is ZEBRA-42");
    expect(await memoriesOf(org.tenantId)).toHaveLength(1);
    expectStatus(await call(`/organizations/${org.id}`, { ...auth, method: "DELETE" }), 204);
    const gone = await db().all<{ n: number }>(sql`SELECT
      (SELECT count(*) FROM memories WHERE organization_id = ${org.id}) +
      (SELECT count(*) FROM memory_entities WHERE tenant_id = ${org.tenantId}) +
      (SELECT count(*) FROM tenant_memory_settings WHERE organization_id = ${org.id}) AS n`);
    expect(gone[0].n).toBe(0);
  });
});

void env;

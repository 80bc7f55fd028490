import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { writeMemory } from "../../src/services/memory/memories";
import { kindOf } from "../../src/services/memory/rules";
import { scopeKeyOf } from "../../src/services/memory/settings";
import { addMember, call, createKey, createOrg, createTenant, expectError, expectStatus, type TestOrg, type TestUser } from "../helpers";
import { db, memoryKb, setMemorySettings } from "./memory-helpers";

async function seed(org: TestOrg, tenantId: string, kbId: string | null, subject: string, content: string) {
  const space = {
    organizationId: org.id,
    tenantId,
    knowledgeBaseId: kbId,
    subjectId: subject,
    scopeKey: await scopeKeyOf(tenantId, kbId, subject),
    retention: "explicit_only" as const,
  };
  const { memory } = await writeMemory({ env: env as any, db: db() }, space, { content, kind: kindOf(content), sourceChatId: null, sourceMessageId: null });
  return memory;
}

describe("memory settings", () => {
  let org: TestOrg;
  let viewer: TestUser, developer: TestUser, billing: TestUser;
  beforeAll(async () => {
    org = await createOrg();
    [viewer, developer, billing] = await Promise.all([addMember(org, "viewer"), addMember(org, "developer"), addMember(org, "billing_admin")]);
  });

  it("defaults to disabled / explicit_only, any member reads", async () => {
    for (const u of [org.owner, viewer, developer]) {
      expect(expectStatus(await call(`/tenants/${org.tenantId}/memory-settings`, { cookie: u.cookie }), 200)).toEqual({
        tenant_id: org.tenantId,
        mode: "disabled",
        retention: "explicit_only",
      });
    }
  });

  it("owner and billing_admin change either or both fields; others 403", async () => {
    const path = `/tenants/${org.tenantId}/memory-settings`;
    expectError(await call(path, { cookie: viewer.cookie, method: "PATCH", body: { mode: "durable" } }), 403, "forbidden");
    expectError(await call(path, { cookie: developer.cookie, method: "PATCH", body: { mode: "durable" } }), 403, "forbidden");
    expect(expectStatus(await call(path, { cookie: billing.cookie, method: "PATCH", body: { mode: "durable" } }), 200)).toMatchObject({ mode: "durable", retention: "explicit_only" });
    expect(expectStatus(await call(path, { cookie: org.owner.cookie, method: "PATCH", body: { retention: "automatic" } }), 200)).toMatchObject({ mode: "durable", retention: "automatic" });
    expect(expectStatus(await call(path, { cookie: viewer.cookie }), 200)).toMatchObject({ mode: "durable", retention: "automatic" });
    expect(expectStatus(await call(path, { cookie: org.owner.cookie, method: "PATCH", body: { mode: "disabled", retention: "none" } }), 200)).toMatchObject({ mode: "disabled", retention: "none" });
  });

  it("validates the body", async () => {
    const path = `/tenants/${org.tenantId}/memory-settings`;
    expectError(await call(path, { cookie: org.owner.cookie, method: "PATCH", body: {} }), 400, "invalid_request");
    const e = expectError(await call(path, { cookie: org.owner.cookie, method: "PATCH", body: { mode: "forever" } }), 400, "invalid_request");
    expect(e.details?.[0].path).toBe("body.mode");
    expectError(await call(path, { cookie: org.owner.cookie, method: "PATCH", raw: "{", headers: { "Content-Type": "application/json" } }), 400);
  });

  it("keys are refused (U only), other organizations get 404, unauthenticated 401", async () => {
    const key = await createKey(org, { scopes: ["admin:full"] });
    expectError(await call(`/tenants/${org.tenantId}/memory-settings`, { key: key.key }), 403, "forbidden");
    expectError(await call(`/tenants/${org.tenantId}/memory-settings`, { key: key.key, method: "PATCH", body: { mode: "durable" } }), 403);
    const stranger = await createOrg();
    expectError(await call(`/tenants/${org.tenantId}/memory-settings`, { cookie: stranger.owner.cookie }), 404, "not_found");
    expectError(await call(`/tenants/${org.tenantId}/memory-settings`, { cookie: stranger.owner.cookie, method: "PATCH", body: { mode: "durable" } }), 404);
    expectError(await call(`/tenants/${org.tenantId}/memory-settings`), 401);
    expectError(await call(`/tenants/ten_missing/memory-settings`, { cookie: org.owner.cookie }), 404);
  });
});

describe("tenant memories", () => {
  let org: TestOrg;
  let viewer: TestUser, developer: TestUser;
  beforeAll(async () => {
    org = await createOrg();
    [viewer, developer] = await Promise.all([addMember(org, "viewer"), addMember(org, "developer")]);
  });

  it("answers a disabled result while durable memory is off, then lists durable memories only", async () => {
    await seed(org, org.tenantId, null, "ext:alice", "My project code is ZEBRA-42.");
    const kb = await memoryKb(org, "kb_restricted");
    await seed(org, org.tenantId, kb.id, "ext:alice", "My locker is 815.");
    expect(expectStatus(await call(`/tenants/${org.tenantId}/memories`, { cookie: org.owner.cookie }), 200)).toEqual({ memories: [], total: 0, disabled: true });
    expect(expectStatus(await call(`/tenants/${org.tenantId}/memories/graph`, { cookie: org.owner.cookie }), 200)).toEqual({ nodes: [], edges: [] });
    await setMemorySettings(org, { mode: "durable" });
    const body = expectStatus(await call(`/tenants/${org.tenantId}/memories`, { cookie: org.owner.cookie }), 200);
    expect(body).toMatchObject({ total: 1, limit: 50, offset: 0, disabled: false });
    expect(body.memories[0]).toMatchObject({
      subject_id: "ext:alice",
      content: "My project code is ZEBRA-42.",
      kind: "fact",
      knowledge_base_id: null,
      source_chat_id: null,
      source_message_id: null,
      entities: ["User", "ZEBRA-42"],
    });
    expect(Object.keys(body.memories[0]).sort()).toEqual(
      ["id", "subject_id", "content", "kind", "knowledge_base_id", "source_chat_id", "source_message_id", "entities", "created_at", "updated_at"].sort(),
    );
  });

  it("pages, searches and filters by subject", async () => {
    for (let i = 0; i < 5; i++) await seed(org, org.tenantId, null, "ext:bob", `My hobby number ${i} is chess variant ${i}.`);
    await seed(org, org.tenantId, null, `user:${viewer.id}`, "I prefer dark mode.");
    const base = `/tenants/${org.tenantId}/memories`;
    const all = expectStatus(await call(`${base}?limit=2&offset=1`, { cookie: org.owner.cookie }), 200);
    expect(all).toMatchObject({ total: 7, limit: 2, offset: 1 });
    expect(all.memories).toHaveLength(2);
    expect(expectStatus(await call(`${base}?external_subject_id=bob`, { cookie: org.owner.cookie }), 200).total).toBe(5);
    expect(expectStatus(await call(`${base}?subject_id=ext:alice`, { cookie: org.owner.cookie }), 200).total).toBe(1);
    expect(expectStatus(await call(`${base}?subject_id=ext:alice&external_subject_id=bob`, { cookie: org.owner.cookie }), 200).total).toBe(0);
    const q = expectStatus(await call(`${base}?q=${encodeURIComponent("chess variant 3")}`, { cookie: org.owner.cookie }), 200);
    expect(q.memories.map((m: any) => m.content)).toEqual(["My hobby number 3 is chess variant 3."]);
    expect(expectStatus(await call(`${base}?q=${encodeURIComponent('zebra" OR *')}`, { cookie: org.owner.cookie }), 200).total).toBe(1);
    expect(expectStatus(await call(`${base}?q=${encodeURIComponent("!!!")}`, { cookie: org.owner.cookie }), 200).total).toBe(0);
    for (const bad of ["limit=0", "limit=201", "offset=-1", "limit=abc"]) {
      expectError(await call(`${base}?${bad}`, { cookie: org.owner.cookie }), 400, "invalid_request");
    }
    expect(expectStatus(await call(`${base}?limit=200`, { cookie: org.owner.cookie }), 200).limit).toBe(200);
  });

  it("members other than owner / billing_admin see only their own memories", async () => {
    const mine = expectStatus(await call(`/tenants/${org.tenantId}/memories`, { cookie: viewer.cookie }), 200);
    expect(mine.memories.map((m: any) => m.content)).toEqual(["I prefer dark mode."]);
    expect(expectStatus(await call(`/tenants/${org.tenantId}/memories?external_subject_id=bob`, { cookie: viewer.cookie }), 200).total).toBe(0);
    expect(expectStatus(await call(`/tenants/${org.tenantId}/memories`, { cookie: developer.cookie }), 200).total).toBe(0);
    const g = expectStatus(await call(`/tenants/${org.tenantId}/memories/graph`, { cookie: viewer.cookie }), 200);
    expect(g.nodes.map((n: any) => n.name).sort()).toEqual(["User", "dark mode"]);
  });

  it("keys and other organizations are refused", async () => {
    const key = await createKey(org, { scopes: ["admin:full"] });
    const m = await seed(org, org.tenantId, null, "ext:carol", "My code is X-1.");
    expectError(await call(`/tenants/${org.tenantId}/memories`, { key: key.key }), 403);
    expectError(await call(`/tenants/${org.tenantId}/memories/graph`, { key: key.key }), 403);
    expectError(await call(`/tenants/${org.tenantId}/memories/${m.id}`, { key: key.key, method: "DELETE" }), 403);
    const stranger = await createOrg();
    expectError(await call(`/tenants/${org.tenantId}/memories`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/tenants/${org.tenantId}/memories/graph`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/tenants/${org.tenantId}/memories/${m.id}`, { cookie: stranger.owner.cookie, method: "DELETE" }), 404);
    // Through the stranger's own tenant, the memory is not found either.
    await setMemorySettings(stranger, { mode: "durable" });
    expectError(await call(`/tenants/${stranger.tenantId}/memories/${m.id}`, { cookie: stranger.owner.cookie, method: "DELETE" }), 404);
  });

  it("the graph has nodes with memory counts and edges from their memory; deleting removes edges and orphaned nodes", async () => {
    const o = await createOrg();
    await setMemorySettings(o, { mode: "durable" });
    const a = await seed(o, o.tenantId, null, "ext:a", "I work at Acme Corp.");
    const b = await seed(o, o.tenantId, null, "ext:a", "My manager is Dana Scully.");
    const c = await seed(o, o.tenantId, null, "ext:b", "I live in Leeds.");
    const g = expectStatus(await call(`/tenants/${o.tenantId}/memories/graph`, { cookie: o.owner.cookie }), 200);
    const byName = Object.fromEntries(g.nodes.map((n: any) => [`${n.name}`, n]));
    expect(g.nodes.filter((n: any) => n.name === "User").map((n: any) => n.memory_count).sort()).toEqual([1, 2]);
    expect(byName["Acme Corp"]).toMatchObject({ type: "organization", memory_count: 1 });
    expect(byName["Dana Scully"]).toMatchObject({ memory_count: 1 });
    expect(byName["Leeds"]).toMatchObject({ type: "location" });
    const edge = g.edges.find((e: any) => e.memory_id === a.id);
    expect(edge).toMatchObject({ relation: "works at", target: byName["Acme Corp"].id });
    expect(g.edges.find((e: any) => e.memory_id === b.id)).toMatchObject({ relation: "manager", target: byName["Dana Scully"].id });
    const onlyA = expectStatus(await call(`/tenants/${o.tenantId}/memories/graph?external_subject_id=a`, { cookie: o.owner.cookie }), 200);
    expect(onlyA.nodes.map((n: any) => n.name).sort()).toEqual(["Acme Corp", "Dana Scully", "User"]);

    const billing = await addMember(o, "billing_admin");
    const dev = await addMember(o, "developer");
    expectError(await call(`/tenants/${o.tenantId}/memories/${a.id}`, { cookie: dev.cookie, method: "DELETE" }), 403);
    expectStatus(await call(`/tenants/${o.tenantId}/memories/${a.id}`, { cookie: billing.cookie, method: "DELETE" }), 204);
    expectError(await call(`/tenants/${o.tenantId}/memories/${a.id}`, { cookie: o.owner.cookie, method: "DELETE" }), 404);
    const after = expectStatus(await call(`/tenants/${o.tenantId}/memories/graph`, { cookie: o.owner.cookie }), 200);
    expect(after.nodes.map((n: any) => n.name)).not.toContain("Acme Corp");
    expect(after.edges.map((e: any) => e.memory_id)).not.toContain(a.id);
    expect(after.nodes.find((n: any) => n.name === "User" && n.memory_count === 1)).toBeTruthy();
    const rows = await db().all<{ n: number }>(sql`SELECT count(*) AS n FROM memory_relations WHERE memory_id = ${a.id}`);
    expect(rows[0].n).toBe(0);
    void c;
  });
});

describe("knowledge-base memories", () => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await createOrg();
  });

  it("memories: null unless kb_restricted; then the same shape, per knowledge base", async () => {
    const plain = await memoryKb(org, "subject");
    expect(expectStatus(await call(`/knowledge-bases/${plain.id}/memories`, { cookie: org.owner.cookie }), 200)).toEqual({ memories: null });
    expect(expectStatus(await call(`/knowledge-bases/${plain.id}/memories/graph`, { cookie: org.owner.cookie }), 200)).toEqual({ nodes: [], edges: [] });
    const kb = await memoryKb(org, "kb_restricted");
    const other = await memoryKb(org, "kb_restricted");
    await seed(org, org.tenantId, kb.id, "ext:alice", "My project code is ZEBRA-42.");
    await seed(org, org.tenantId, kb.id, "ext:bob", "My project code is KOALA-7.");
    await seed(org, org.tenantId, other.id, "ext:alice", "My badge is 9.");
    await seed(org, org.tenantId, null, "ext:alice", "My durable fact is here.");
    const body = expectStatus(await call(`/knowledge-bases/${kb.id}/memories`, { cookie: org.owner.cookie }), 200);
    expect(body).toMatchObject({ total: 2, limit: 50, offset: 0, disabled: false });
    expect(body.memories.every((m: any) => m.knowledge_base_id === kb.id)).toBe(true);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/memories?external_subject_id=alice`, { cookie: org.owner.cookie }), 200).memories.map((m: any) => m.content)).toEqual(["My project code is ZEBRA-42."]);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/memories?q=koala`, { cookie: org.owner.cookie }), 200).total).toBe(1);
    expectError(await call(`/knowledge-bases/${kb.id}/memories?limit=500`, { cookie: org.owner.cookie }), 400);
    const g = expectStatus(await call(`/knowledge-bases/${kb.id}/memories/graph`, { cookie: org.owner.cookie }), 200);
    expect(g.nodes.map((n: any) => n.name).sort()).toEqual(["KOALA-7", "User", "User", "ZEBRA-42"]);
    expect(g.edges.map((e: any) => e.relation)).toEqual(["project code", "project code"]);
  });

  it("keys with documents:read list; documents:delete deletes; scope, tenant and knowledge-base restrictions hold", async () => {
    const kb = await memoryKb(org, "kb_restricted");
    const kb2 = await memoryKb(org, "kb_restricted");
    const m = await seed(org, org.tenantId, kb.id, "ext:alice", "My project code is ZEBRA-42.");
    const m2 = await seed(org, org.tenantId, kb2.id, "ext:alice", "My project code is ZEBRA-43.");
    const durable = await seed(org, org.tenantId, null, "ext:alice", "My durable code is D-1.");
    const reader = await createKey(org, { scopes: ["documents:read"] });
    const deleter = await createKey(org, { scopes: ["documents:delete"] });
    const noScope = await createKey(org, { scopes: ["query:rag"] });
    const onlyKb2 = await createKey(org, { scopes: ["documents:read", "documents:delete"], knowledge_base_id: kb2.id });
    const t2 = await createTenant(org);
    const otherTenant = await createKey(org, { scopes: ["documents:read", "documents:delete"], tenant_ids: [t2.id] });

    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/memories`, { key: reader.key }), 200).total).toBe(1);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/memories/graph`, { key: reader.key }), 200).nodes.length).toBe(2);
    expectError(await call(`/knowledge-bases/${kb.id}/memories`, { key: noScope.key }), 403);
    expectError(await call(`/knowledge-bases/${kb.id}/memories/${m.id}`, { key: reader.key, method: "DELETE" }), 403);
    expectError(await call(`/knowledge-bases/${kb.id}/memories`, { key: onlyKb2.key }), 404);
    expectError(await call(`/knowledge-bases/${kb.id}/memories/${m.id}`, { key: onlyKb2.key, method: "DELETE" }), 404);
    expectError(await call(`/knowledge-bases/${kb2.id}/memories/${m.id}`, { key: onlyKb2.key, method: "DELETE" }), 404);
    expectError(await call(`/knowledge-bases/${kb.id}/memories`, { key: otherTenant.key }), 404);
    expectError(await call(`/knowledge-bases/${kb.id}/memories/${durable.id}`, { key: deleter.key, method: "DELETE" }), 404);
    const stranger = await createOrg();
    expectError(await call(`/knowledge-bases/${kb.id}/memories`, { cookie: stranger.owner.cookie }), 404);
    const viewer = await addMember(org, "viewer");
    expectError(await call(`/knowledge-bases/${kb.id}/memories/${m.id}`, { cookie: viewer.cookie, method: "DELETE" }), 403);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/memories`, { cookie: viewer.cookie }), 200).total).toBe(0);

    expectStatus(await call(`/knowledge-bases/${kb.id}/memories/${m.id}`, { key: deleter.key, method: "DELETE" }), 204);
    expectError(await call(`/knowledge-bases/${kb.id}/memories/${m.id}`, { key: deleter.key, method: "DELETE" }), 404);
    expectStatus(await call(`/knowledge-bases/${kb2.id}/memories/${m2.id}`, { key: onlyKb2.key, method: "DELETE" }), 204);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/memories/graph`, { key: reader.key }), 200)).toEqual({ nodes: [], edges: [] });
  });
});

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import type { Chat, KnowledgeBase } from "../../src/db/schema";
import { delegationProvider } from "../../src/services/delegation/provider";
import { emptyToolSettings, type TurnScope } from "../../src/contracts/tools";
import { call, createKb, createOrg, createTenant, expectError, expectStatus } from "../helpers";
import { kbWithDocument } from "../chats/chat-helpers";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";
import { agentBody, createAgent, runAgent } from "./agent-helpers";

const SHIPPING = `# Logistics\n\n## Shipping\nParcels to Norway take 4 business days and cost 25 euros.\n`;

/** The turn scope of a run of `agentId` (what the toolbox loop gives a provider). */
async function scopeOfRun(runId: string, depth = 0, mode: "quick" | "deep" = "deep"): Promise<TurnScope> {
  const db = createDb(env.DB);
  const run = (await env.DB.prepare("SELECT * FROM agent_runs WHERE id = ?").bind(runId).first<any>())!;
  const chatRow = (await env.DB.prepare("SELECT * FROM chats WHERE id = ?").bind(run.chat_id).first<any>())!;
  const chat = {
    id: chatRow.id,
    organizationId: chatRow.organization_id,
    environmentId: chatRow.environment_id,
    tenantId: chatRow.tenant_id,
    knowledgeBaseId: chatRow.knowledge_base_id,
    settings: JSON.parse(chatRow.settings),
  } as Chat;
  return {
    db,
    env,
    chat,
    kb: { id: chat.knowledgeBaseId } as KnowledgeBase,
    actor: { userId: chatRow.owner_user_id },
    subject: `user:${chatRow.owner_user_id}`,
    mode,
    streaming: false,
    runId,
    depth,
  };
}

const ctxOf = (scope: TurnScope) => ({ signal: new AbortController().signal, scope, emit: () => {}, callId: "c1" });

describe("delegation (one hop)", () => {
  it("an agent delegates to another agent: a delegation run with parent_run_id, metered to the delegate's tenant, answer as a citable passage", async () => {
    const { org, kb, auth } = await kbWithDocument();
    // The delegate lives in the same tenant, on another knowledge base open to inbound delegation
    // (another tenant's agent is never a delegate: API-DECISIONS "Wave 3 → Access is one rule").
    const t2 = { id: org.tenantId };
    const kb2 = await createKb(org);
    const doc = await uploadFile(auth, kb2, { filename: "logistics.md", mime: "text/markdown", body: SHIPPING });
    expect((await waitForDocument(auth, doc.id)).status).toBe("processed");
    const refused = expectError(await call("/agents", { ...auth, body: agentBody(kb, { delegate_agent_ids: ["agt_x"] }) }), 400);
    expect(refused.details?.[0].path).toBe("body.delegate_agent_ids.0");
    const delegate = await createAgent(auth, kb2, { name: "Logistics desk", goal: "Answer shipping questions" });
    // Closed to inbound delegation: refused at creation.
    const closed = expectError(await call("/agents", { ...auth, body: agentBody(kb, { delegate_agent_ids: [delegate.id] }) }), 400);
    expect(closed.details?.[0].path).toBe("body.delegate_agent_ids.0");
    expectStatus(await call(`/knowledge-bases/${kb2.id}`, { ...auth, method: "PATCH", body: { agent_sharing: { inbound_delegation_enabled: true } } }), 200);
    const lead = await createAgent(auth, kb, { delegate_agent_ids: [delegate.id], agent_mode: "deep" });
    expect(lead.delegate_agent_ids).toEqual([delegate.id]);

    const parent = expectStatus(await runAgent(auth, lead.id, { content: "How long do parcels to Norway take?" }), 200);
    expect(parent.run.snapshot.tools.delegate_agent_ids).toEqual([delegate.id]);
    // In the turn (local-extractive, deep): the delegate is consulted once, its answer a cited source.
    expect(parent.assistant_message.metadata.delegatedAgentIds).toEqual([delegate.id]);
    const src = parent.assistant_message.metadata.sources.find((s: any) => s.filename === "Agent: Logistics desk");
    expect(src?.text).toMatch(/4 business days/);
    expect(parent.assistant_message.content).toContain(`[${src.index}]`);
    const inTurn = expectStatus(await call(`/agents/${delegate.id}/runs`, auth), 200).runs;
    expect(inTurn).toHaveLength(1);
    expect(inTurn[0]).toMatchObject({ trigger: "delegation", parent_run_id: parent.run.id, status: "completed" });

    // The toolbox the lead's turn gets: one delegate tool, consulted once in deep mode.
    const scope = await scopeOfRun(parent.run.id);
    const settings = { ...emptyToolSettings(), delegateIds: [delegate.id] };
    const tools = await delegationProvider.tools(scope, settings);
    expect(tools.map((t) => t.name)).toEqual([`delegate__${delegate.id}`]);
    expect(tools[0].kind).toBe("passages");
    expect(tools[0].plan!("How long do parcels to Norway take?", scope)).toEqual({ question: "How long do parcels to Norway take?" });
    expect(tools[0].plan!("q", { ...scope, mode: "quick" })).toBeNull();

    const out = await tools[0].execute({ question: "How long do parcels to Norway take?" }, ctxOf(scope));
    expect(out.isError).toBeFalsy();
    expect(out.delegatedAgentId).toBe(delegate.id);
    expect(out.passages).toHaveLength(1);
    expect(out.passages![0]).toMatchObject({ filename: "Agent: Logistics desk", document_id: null });
    expect(out.passages![0].text).toMatch(/4 business days/);

    const runs = expectStatus(await call(`/agents/${delegate.id}/runs`, auth), 200).runs;
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatchObject({ trigger: "delegation", parent_run_id: parent.run.id, status: "completed" });
    // Metered to the delegate's own tenant.
    // (the tenant is the lead's too, so its own run is in the log as well)
    const delegateRunIds = new Set(runs.map((r: any) => r.id));
    const logs = expectStatus(await call(`/billing/tenants/${t2.id}/usage/logs`, auth), 200).logs.filter((l: any) => delegateRunIds.has(l.agent_run_id));
    expect(logs).toHaveLength(2);
    for (const l of logs) expect(l).toMatchObject({ operation: "agent_run", tenant_id: t2.id });
    expect(logs.map((l: any) => l.agent_run_id).sort()).toEqual(runs.map((r: any) => r.id).sort());

    // Checked again at call time: the knowledge base closes inbound delegation.
    expectStatus(await call(`/knowledge-bases/${kb2.id}`, { ...auth, method: "PATCH", body: { agent_sharing: { inbound_delegation_enabled: false } } }), 200);
    const closedNow = await tools[0].execute({ question: "Norway?" }, ctxOf(scope));
    expect(closedNow.isError).toBe(true);
    expect(await delegationProvider.tools(scope, settings)).toEqual([]);
    expect(expectStatus(await call(`/agents/${delegate.id}/runs`, auth), 200).total).toBe(2);
  });

  it("one hop: a delegate gets no delegate tools and cannot name any; same-tenant agents need no sharing", async () => {
    const { kb, auth } = await kbWithDocument();
    const helper = await createAgent(auth, kb, { name: "Helper" });
    const lead = await createAgent(auth, kb, { delegate_agent_ids: [helper.id] });
    const parent = expectStatus(await runAgent(auth, lead.id, { content: "refund?" }), 200);
    const scope1 = await scopeOfRun(parent.run.id, 1);
    const settings = { ...emptyToolSettings(), delegateIds: [helper.id] };
    expect(await delegationProvider.tools(scope1, settings)).toEqual([]);
    await expect(
      delegationProvider.validate!({ db: scope1.db, env, chat: scope1.chat, subject: scope1.subject, mode: "deep", depth: 1 }, settings),
    ).rejects.toMatchObject({ code: "invalid_request" });
    // At depth 0 the same settings validate.
    await delegationProvider.validate!({ db: scope1.db, env, chat: scope1.chat, subject: scope1.subject, mode: "deep", depth: 0 }, settings);
    // The delegate's own run is at depth 1: its toolbox has no delegates even if its version names some.
    const scope0 = await scopeOfRun(parent.run.id, 0);
    const [tool] = await delegationProvider.tools(scope0, settings);
    await tool.execute({ question: "refund?" }, ctxOf(scope0));
    const child = expectStatus(await call(`/agents/${helper.id}/runs`, auth), 200).runs[0];
    expect(child).toMatchObject({ trigger: "delegation", parent_run_id: parent.run.id });
    const inside = await tool.execute({ question: "refund?" }, ctxOf({ ...scope0, depth: 1 }));
    expect(inside.isError).toBe(true);
  });

  it("stopping the caller's turn cancels the delegate's run", async () => {
    const { kb, auth } = await kbWithDocument();
    const slow = await createAgent(auth, kb, { name: "Slow desk", model: "test-gpt-slow" });
    const lead = await createAgent(auth, kb, { delegate_agent_ids: [slow.id] });
    const parent = expectStatus(await runAgent(auth, lead.id, { content: "refund?" }), 200);
    const scope = await scopeOfRun(parent.run.id);
    const [tool] = await delegationProvider.tools(scope, { ...emptyToolSettings(), delegateIds: [slow.id] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1500);
    await tool.execute({ question: "What does the refund policy say?" }, { ...ctxOf(scope), signal: controller.signal });
    const [child] = expectStatus(await call(`/agents/${slow.id}/runs`, auth), 200).runs;
    expect(child).toMatchObject({ trigger: "delegation", parent_run_id: parent.run.id, status: "cancelled" });
    expect(child.output.length).toBeGreaterThan(0);
  });

  it("chats name delegates in delegate_agent_ids through the same provider", async () => {
    const { kb, auth } = await kbWithDocument();
    const helper = await createAgent(auth, kb, { name: "Helper desk" });
    const bad = expectError(
      await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message: "refund?", delegate_agent_ids: ["agt_nope"] } }),
      400,
    );
    expect(bad.details?.[0].path).toBe("body.delegate_agent_ids.0");
    const r = expectStatus(
      await call("/chats", {
        ...auth,
        body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", agent_mode: "deep", message: "How many days do customers have to request a refund?", delegate_agent_ids: [helper.id] },
      }),
      201,
    );
    expect(r.assistant_message.metadata.delegatedAgentIds).toEqual([helper.id]);
    const runs = expectStatus(await call(`/agents/${helper.id}/runs`, auth), 200).runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: "delegation", parent_run_id: null, status: "completed" });
  });

  it("agents of another tenant are never delegates, even with inbound delegation on; checked again at call time", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const t2 = await createTenant(org, { credits_pool: 50 });
    const kb2 = await createKb(org, { tenant_id: t2.id });
    expectStatus(await call(`/knowledge-bases/${kb2.id}`, { ...auth, method: "PATCH", body: { agent_sharing: { inbound_delegation_enabled: true } } }), 200);
    const foreign = await createAgent(auth, kb2, { name: "Other tenant's desk" });
    const e = expectError(await call("/agents", { ...auth, body: agentBody(kb, { delegate_agent_ids: [foreign.id] }) }), 400);
    expect(e.details?.[0].path).toBe("body.delegate_agent_ids.0");
    expect(e.message).toContain(foreign.id);
    // A chat of the first tenant naming it: refused before any work and any charge.
    const chat = await call("/chats", {
      ...auth,
      body: { id: crypto.randomUUID(), tenant_id: org.tenantId, knowledge_base_id: kb.id, model: "local-extractive", message: "hello?", delegate_agent_ids: [foreign.id] },
    });
    expect(expectError(chat, 400, "invalid_request").message).toContain(foreign.id);
    expect(expectStatus(await call(`/agents/${foreign.id}/runs`, auth), 200).total).toBe(0);
    // A key limited to the first tenant cannot reach it either.
    const kbScopedKey = expectStatus(await call(`/environments/${org.envId}/api-keys`, { ...auth, body: { name: "kb", scopes: ["query:rag", "agents:write"], knowledge_base_id: kb.id } }), 201).key;
    expectError(await call("/agents", { key: kbScopedKey, body: agentBody(kb, { delegate_agent_ids: [foreign.id] }) }), 400, "invalid_request");
  });

  it("agents of another organization are never delegates, even with inbound delegation on", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const other = await createOrg();
    const otherKb = await createKb(other, { agent_sharing: undefined });
    expectStatus(await call(`/knowledge-bases/${otherKb.id}`, { cookie: other.owner.cookie, method: "PATCH", body: { agent_sharing: { inbound_delegation_enabled: true } } }), 200);
    const foreign = await createAgent({ cookie: other.owner.cookie }, otherKb);
    const e = expectError(await call("/agents", { cookie: org.owner.cookie, body: agentBody(kb, { delegate_agent_ids: [foreign.id] }) }), 400);
    expect(e.details?.[0].path).toBe("body.delegate_agent_ids.0");
  });
});

import { describe, expect, it } from "vitest";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus } from "../helpers";
import { agentBody, createAgent } from "./agent-helpers";

describe("agent definitions and versions", () => {
  it("creates version 1, reads, lists, deploys immutable versions and archives", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const a = await createAgent(auth, kb, { description: "Helps with refunds" });
    expect(a).toMatchObject({
      tenant_id: kb.tenant_id,
      knowledge_base_id: kb.id,
      agentVersion: 1,
      status: "active",
      name: "Refund helper",
      goal: "Answer questions about refunds from the handbook",
      model: "local-extractive",
      agent_mode: "quick",
      skills: [],
      delegate_agent_ids: [],
      schedule: null,
    });
    expect(a.id).toMatch(/^agt_/);
    expect(expectStatus(await call(`/agents/${a.id}`, auth), 200)).toEqual(a);

    const v2 = expectStatus(await call(`/agents/${a.id}/deploy`, { ...auth, body: { goal: "New goal", instructions: null } }), 200);
    expect(v2).toMatchObject({ agentVersion: 2, goal: "New goal", instructions: null, name: "Refund helper", knowledge_base_id: kb.id });
    // An empty body republishes the same configuration as a new version.
    const v3 = expectStatus(await call(`/agents/${a.id}/deploy`, { ...auth, body: {} }), 200);
    expect(v3).toMatchObject({ agentVersion: 3, goal: "New goal" });

    const versions = expectStatus(await call(`/agents/${a.id}/versions`, auth), 200).versions;
    expect(versions.map((v: any) => v.agentVersion)).toEqual([1, 2, 3]);
    expect(versions[0].config.goal).toBe("Answer questions about refunds from the handbook");
    expect(versions[0].config.instructions).toBe("Be brief and cite the handbook.");
    expect(versions[1].config.goal).toBe("New goal");
    expect(versions[2].created_by).toBe(org.owner.id);

    for (const f of ["tenant_id", "knowledge_base_id"]) {
      const e = expectError(await call(`/agents/${a.id}/deploy`, { ...auth, body: { [f]: "x" } }), 400);
      expect(e.details?.[0].path).toBe(`body.${f}`);
    }

    const list = expectStatus(await call(`/agents?tenant_id=${kb.tenant_id}`, auth), 200);
    expect(list).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.agents[0].id).toBe(a.id);

    expectStatus(await call(`/agents/${a.id}`, { ...auth, method: "DELETE" }), 204);
    const archived = expectStatus(await call(`/agents/${a.id}`, auth), 200);
    expect(archived.status).toBe("archived");
    expect(archived.archived_at).toBeTruthy();
    expectError(await call(`/agents/${a.id}/deploy`, { ...auth, body: {} }), 409, "agent_archived");
    expectError(await call(`/agents/${a.id}/messages`, { ...auth, body: { content: "hi" } }), 409, "agent_archived");
    // Archiving twice is fine.
    expectStatus(await call(`/agents/${a.id}`, { ...auth, method: "DELETE" }), 204);
  });

  it("validates everything up front with a 400 naming the field", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const other = await createOrg();
    const otherKb = await createKb(other);
    const tenant2 = await createTenant(org);
    const kb2 = await createKb(org, { tenant_id: tenant2.id });
    const skill = expectStatus(await call("/skills", { ...auth, body: { tenant_id: kb.tenant_id, name: "s", description: "d", body: "b" } }), 201);
    const skill2 = expectStatus(await call("/skills", { ...auth, body: { tenant_id: tenant2.id, name: "s", description: "d", body: "b" } }), 201);
    const archivedAgent = await createAgent(auth, kb);
    expectStatus(await call(`/agents/${archivedAgent.id}`, { ...auth, method: "DELETE" }), 204);

    const cases: Array<[Record<string, unknown>, string, string?]> = [
      [{ knowledge_base_id: otherKb.id }, "body.knowledge_base_id"],
      [{ knowledge_base_id: "kb_missing" }, "body.knowledge_base_id"],
      [{ knowledge_base_id: kb2.id }, "body.tenant_id", "tenant_mismatch"],
      [{ model: "no-such-model" }, "body.model"],
      [{ skills: [{ skill_id: skill2.id, mode: "always" }] }, "body.skills.0.skill_id"],
      [{ skills: [{ skill_id: skill.id, mode: "always" }, { skill_id: "skl_nope", mode: "auto" }] }, "body.skills.1.skill_id"],
      [{ skills: [{ skill_id: skill.id, mode: "sometimes" }] }, "body.skills.0.mode"],
      [{ mcp_server_ids: ["mcp_nope"] }, "body.mcp_server_ids.0"],
      [{ connector_slugs: ["github"] }, "body.connector_slugs.0", "connector_not_connected"],
      [{ delegate_agent_ids: ["agt_nope"] }, "body.delegate_agent_ids.0"],
      [{ delegate_agent_ids: [archivedAgent.id] }, "body.delegate_agent_ids.0"],
      [{ a2a_agent_ids: ["a2a_nope"] }, "body.a2a_agent_ids.0"],
      [{ schedule: "* * * *" }, "body.schedule"],
      [{ schedule: "61 * * * *" }, "body.schedule"],
      [{ schedule: "* * * * * *" }, "body.schedule"],
      [{ schedule: { cron: "0 9 * * *", timezone: "Mars/Olympus" } }, "body.schedule.timezone"],
      [{ schedule: { cron: "0 99 * * *", timezone: "Europe/Berlin" } }, "body.schedule.cron"],
      [{ name: "" }, "body.name"],
      [{ goal: undefined }, "body.goal"],
    ];
    for (const [patch, path, code] of cases) {
      const r = await call("/agents", { ...auth, body: agentBody(kb, patch) });
      const e = expectError(r, 400, code);
      expect(e.details?.map((d) => d.path), JSON.stringify(patch)).toContain(path);
    }
    // Deploy validates the same way.
    const a = await createAgent(auth, kb);
    const e = expectError(await call(`/agents/${a.id}/deploy`, { ...auth, body: { model: "nope" } }), 400);
    expect(e.details?.[0].path).toBe("body.model");
    expect(expectStatus(await call(`/agents/${a.id}`, auth), 200).agentVersion).toBe(1);
    // An agent cannot delegate to itself.
    const self = expectError(await call(`/agents/${a.id}/deploy`, { ...auth, body: { delegate_agent_ids: [a.id] } }), 400);
    expect(self.details?.[0].path).toBe("body.delegate_agent_ids.0");
  });

  it("MCP servers: ids of the organization are accepted, another organization's are refused naming the field", async () => {
    const { mcpUrl } = await import("../mcp/mcp-helpers");
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const server = expectStatus(await call(`/mcp/servers?org_id=${org.id}`, { ...auth, body: { name: "Tools", url: mcpUrl("/open/mcp") } }), 201);
    const other = await createOrg();
    const foreign = expectStatus(await call(`/mcp/servers?org_id=${other.id}`, { cookie: other.owner.cookie, body: { name: "Theirs", url: mcpUrl("/open/mcp") } }), 201);
    const a = await createAgent(auth, kb, { mcp_server_ids: [server.id] });
    expect(a.mcp_server_ids).toEqual([server.id]);
    const e = expectError(await call("/agents", { ...auth, body: agentBody(kb, { mcp_server_ids: [server.id, foreign.id] }) }), 400);
    expect(e.details?.map((d) => d.path)).toContain("body.mcp_server_ids.1");
  });

  it("refuses by scope, role, tenant and organization", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const a = await createAgent(auth, kb);

    const viewer = await addMember(org, "viewer");
    const developer = await addMember(org, "developer");
    expectError(await call("/agents", { cookie: viewer.cookie, body: agentBody(kb) }), 403);
    expectError(await call(`/agents/${a.id}/deploy`, { cookie: viewer.cookie, body: {} }), 403);
    expectError(await call(`/agents/${a.id}`, { cookie: viewer.cookie, method: "DELETE" }), 403);
    expectStatus(await call(`/agents/${a.id}`, { cookie: viewer.cookie }), 200);
    expectStatus(await call("/agents", { cookie: developer.cookie, body: agentBody(kb) }), 201);

    const readKey = await createKey(org, { scopes: ["agents:read"] });
    const writeKey = await createKey(org, { scopes: ["agents:write", "agents:read"] });
    const ragKey = await createKey(org, { scopes: ["query:rag"] });
    expectError(await call("/agents", { key: readKey.key, body: agentBody(kb) }), 403);
    expectStatus(await call(`/agents/${a.id}`, { key: readKey.key }), 200);
    expectStatus(await call(`/agents/${a.id}/runs`, { key: readKey.key }), 200);
    expectError(await call(`/agents/${a.id}`, { key: ragKey.key }), 403);
    expectError(await call(`/agents/${a.id}/messages`, { key: readKey.key, body: { content: "hi" } }), 403);
    const created = expectStatus(await call("/agents", { key: writeKey.key, body: agentBody(kb) }), 201);
    expect(created.agentVersion).toBe(1);

    // Another organization: 404 on the agent, 404 on the tenant.
    const other = await createOrg();
    const otherKey = await createKey(other, { scopes: ["agents:read", "agents:write", "query:rag"] });
    expectError(await call(`/agents/${a.id}`, { cookie: other.owner.cookie }), 404);
    expectError(await call(`/agents/${a.id}`, { key: otherKey.key }), 404);
    expectError(await call(`/agents/${a.id}/versions`, { key: otherKey.key }), 404);
    expectError(await call(`/agents/${a.id}/messages`, { key: otherKey.key, body: { content: "hi" } }), 404);
    expectError(await call(`/agents/${a.id}/deploy`, { key: otherKey.key, body: {} }), 404);
    expectError(await call(`/agents?tenant_id=${kb.tenant_id}`, { key: otherKey.key }), 404);
    expectError(await call("/agents", { key: otherKey.key, body: agentBody(kb) }), 404);

    // A key of another tenant of the same organization.
    const t2 = await createTenant(org);
    const t2Key = await createKey(org, { scopes: ["agents:read", "agents:write", "query:rag"], tenant_ids: [t2.id] });
    expectError(await call(`/agents/${a.id}`, { key: t2Key.key }), 404);
    expectError(await call(`/agents?tenant_id=${kb.tenant_id}`, { key: t2Key.key }), 403);
    expectError(await call("/agents", { key: t2Key.key, body: agentBody(kb) }), 403);

    // A key restricted to another knowledge base: cannot use this one, and lists only its own.
    const kb2 = await createKb(org);
    const kbKey = await createKey(org, { scopes: ["agents:read", "agents:write"], knowledge_base_id: kb2.id });
    expectError(await call(`/agents/${a.id}`, { key: kbKey.key }), 404);
    const refused = expectError(await call("/agents", { key: kbKey.key, body: agentBody(kb) }), 400);
    expect(refused.details?.[0].path).toBe("body.knowledge_base_id");
    const own = expectStatus(await call("/agents", { key: kbKey.key, body: agentBody(kb2) }), 201);
    const listed = expectStatus(await call(`/agents?tenant_id=${kb.tenant_id}`, { key: kbKey.key }), 200);
    expect(listed.agents.map((x: any) => x.id)).toEqual([own.id]);
  });

  it("deleting the knowledge base archives its agents and keeps their runs", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const a = await createAgent(auth, kb, { schedule: "0 9 * * *" });
    expect(a.schedule).toMatchObject({ cron: "0 9 * * *", timezone: "UTC", enabled: true });
    expect(a.schedule.next_run_at).toBeTruthy();
    const r = expectStatus(await call(`/agents/${a.id}/messages`, { ...auth, body: { content: "refunds?" } }), 200);
    expectStatus(await call(`/knowledge-bases/${kb.id}`, { ...auth, method: "DELETE" }), 204);
    const after = expectStatus(await call(`/agents/${a.id}`, auth), 200);
    expect(after.status).toBe("archived");
    expect(after.schedule.enabled).toBe(false);
    const runs = expectStatus(await call(`/agents/${a.id}/runs`, auth), 200);
    expect(runs.runs.map((x: any) => x.id)).toEqual([r.run.id]);
  });
});

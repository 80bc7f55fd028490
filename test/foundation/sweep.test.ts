import { describe, expect, it } from "vitest";
import { newChat } from "../chats/chat-helpers";
import { mcpUrl } from "../mcp/mcp-helpers";
import { BASE, call, createKb, createKey, createOrg, expectStatus, fetchWorker, type Auth } from "../helpers";

/**
 * Every operation in /openapi.json, called with hostile path parameters,
 * query strings and bodies, by a session and by an API key with every scope,
 * both on ids that do not exist and on real resources: nothing may answer 5xx
 * or leak an internal error.
 */
const ALL_SCOPES = [
  "documents:read", "documents:write", "documents:delete", "query:rag", "tenants:read", "tenants:write", "tenants:delete",
  "skills:read", "skills:write", "artifacts:read", "artifacts:write", "agents:read", "agents:write",
  "connectors:read", "connectors:write", "connectors:delete",
];

const JUNK_IDS = ["x", "00000000-0000-0000-0000-000000000000", "%00", "a".repeat(300), "..%2F..%2Fetc"];
const BODIES: unknown[] = [undefined, null, [], "text", 12, {}, { id: 5, name: { a: 1 }, tenant_id: [], content: null, amount: "NaN", type: "exe" }];
const QUERY = "?limit=-1&offset=abc&start_date=2026-13-45&end_date=zz&kb_id=&document_id=%00&tenant_id=1&is_api_key=maybe";

interface Operation {
  path: string;
  method: string;
}

async function documentedOperations(): Promise<Operation[]> {
  const spec = (await (await fetchWorker("/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(spec.paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
      // Logging out would end the session the sweep runs with (logout has its own tests).
      .filter(() => path !== "/api/v1/auth/logout")
      .map((m) => ({ path, method: m.toUpperCase() })),
  );
}

async function sweep(operations: Operation[], auths: Auth[], idFor: (path: string, param: string) => string, bodies: unknown[], query = "") {
  const failures: string[] = [];
  for (const { path, method } of operations) {
    // /api/v1 paths are relative to the API; the signed upload and download URLs live outside it.
    const filled = path.replace(/\{([^}]+)\}/g, (_, param: string) => idFor(path, param)) + query;
    const url = filled.startsWith("/api/v1/") ? filled.slice("/api/v1".length) : BASE + filled;
    for (const body of method === "GET" || method === "DELETE" ? [undefined] : bodies) {
      for (const auth of auths) {
        const r = await call(url, { ...auth, method, body });
        if (r.status >= 500 || r.body?.error?.code === "internal_error") {
          failures.push(`${method} ${url} ${JSON.stringify(body)} (${auth.key ? "key" : "session"}) -> ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        }
      }
    }
  }
  return failures;
}

describe("every documented operation survives hostile input", () => {
  it("ids that do not exist, junk queries and junk bodies: no 5xx", async () => {
    const org = await createOrg();
    const { key } = await createKey(org, { scopes: ALL_SCOPES });
    const operations = await documentedOperations();
    expect(operations.length).toBeGreaterThan(80);
    const auths = [{ cookie: org.owner.cookie }, { key }];
    const failures: string[] = [];
    for (const [i, junk] of JUNK_IDS.entries()) {
      failures.push(...(await sweep(operations, auths, () => junk, i === 0 ? BODIES : [BODIES[6]], i === 0 ? QUERY : "")));
    }
    expect(failures).toEqual([]);
  }, 180_000);

  it("real resources with junk bodies and queries: no 5xx", async () => {
    const org = await createOrg();
    const { key } = await createKey(org, { scopes: ALL_SCOPES });
    const spare = await createKey(org, { scopes: ["tenants:read"] });
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const chat = await newChat(auth, kb, { message: "Hello there" });
    const skill = expectStatus(await call("/skills", { ...auth, body: { tenant_id: org.tenantId, name: "S", description: "d", body: "b" } }), 201);
    const artifact = expectStatus(
      await call(`/knowledge-bases/${kb.id}/artifacts`, { ...auth, body: { type: "markdown", title: "T", summary: "s", content: "# T" } }),
      201,
    );
    const doc = expectStatus(
      await call("/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: org.tenantId, filename: "a.md", mime_type: "text/markdown", size_bytes: 10 } }),
      201,
    );
    const agent = expectStatus(
      await call("/agents", { ...auth, body: { tenant_id: org.tenantId, knowledge_base_id: kb.id, name: "A", goal: "g", model: "local-extractive" } }),
      201,
    );
    const run = expectStatus(await call(`/agents/${agent.id}/messages`, { ...auth, body: { content: "Hello there" } }), 200).run;
    const mcpServer = expectStatus(await call(`/mcp/servers?org_id=${org.id}`, { ...auth, body: { name: "Sweep tools", url: mcpUrl("/open/mcp") } }), 201);
    const ids: Record<string, string> = {
      mcp: mcpServer.id,
      agents: agent.id,
      organizations: org.id,
      environments: org.envId,
      tenants: org.tenantId,
      "knowledge-bases": kb.id,
      skills: skill.id,
      "skills/catalog": "tpl_summarize",
      artifacts: artifact.id,
      documents: doc.document_id,
      chats: chat.chat?.id ?? chat.id,
      "shared-chats": chat.chat?.id ?? chat.id,
      "api-keys": spare.id,
    };
    const idFor = (path: string, param: string) => {
      if (param === "tenantId") return org.tenantId;
      if (param === "orgId") return org.id;
      if (param === "messageId") return chat.assistant_message?.id ?? "x";
      if (param === "memoryId") return "mry_doesnotexist";
      if (param === "runId") return run.id;
      if (param !== "id") return "x";
      const group = path.replace(/^(\/api\/v1)?\//, "").match(/^(skills\/catalog|[^/]+)/)?.[1] ?? "";
      return ids[group] ?? "x";
    };
    // Deletes of real resources last, the innermost first and the organization itself at the very end,
    // so that everything else meets them alive.
    const rank = (o: { path: string; method: string }) =>
      o.method !== "DELETE" ? 0 : o.path === "/api/v1/organizations/{id}" ? 10_000 : 1000 - o.path.length;
    const operations = (await documentedOperations()).sort((a, b) => rank(a) - rank(b));
    const reads = operations.filter((o) => o.method !== "DELETE");
    const failures = [
      ...(await sweep(reads, [auth, { key }], idFor, BODIES.slice(1), QUERY)),
      ...(await sweep(operations, [auth, { key }], idFor, BODIES.slice(5))),
      // Routes that take the organization in the query (MCP registrations), with a real one.
      ...(await sweep(reads.filter((o) => o.path.includes("/mcp")), [auth, { key }], idFor, BODIES.slice(1), `?org_id=${org.id}`)),
    ];
    expect(failures).toEqual([]);
  }, 180_000);
});

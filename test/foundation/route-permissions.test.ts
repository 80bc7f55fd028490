import { describe, expect, it } from "vitest";
import { PERMISSIONS, type Permission } from "../../src/auth/permissions";
import { isPublicApiPath } from "../../src/auth/public-paths";
import { SCOPES } from "../../src/contracts/scopes";
import { BASE, call, createKb, createKey, createOrg, fetchWorker } from "../helpers";

/**
 * The permission beside the route (src/auth/route-permission.ts): every
 * operation in /openapi.json declares `x-permission`, and a key that lacks the
 * declared scope (or any key, on a user-only route) is refused with 403 before
 * its input is looked at: a junk body, a junk query and junk ids still answer
 * 403, never 400 or 404.
 */

interface Operation {
  path: string;
  method: string;
  permission: unknown;
}

async function operations(): Promise<Operation[]> {
  const spec = (await (await fetchWorker("/openapi.json")).json()) as {
    paths: Record<string, Record<string, { "x-permission"?: unknown }>>;
  };
  return Object.entries(spec.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => ["get", "post", "put", "patch", "delete"].includes(m))
      .map(([m, op]) => ({ path, method: m.toUpperCase(), permission: op["x-permission"] })),
  );
}

const JUNK_BODY = { id: 5, name: { a: 1 }, tenant_id: [], kb_id: 7, knowledge_base_id: null, content: null, amount: "NaN" };
const JUNK_QUERY = "?limit=-1&offset=abc&tenant_id=&kb_id=&document_id=&start_date=2026-13-45";
const GRANTABLE = SCOPES.filter((s) => s !== "admin:full");

describe("route permissions", () => {
  it("every documented operation declares x-permission, from the permission table", async () => {
    const ops = await operations();
    expect(ops.length).toBeGreaterThan(80);
    const missing = ops.filter((o) => typeof o.permission !== "string").map((o) => `${o.method} ${o.path}`);
    expect(missing).toEqual([]);
    const unknown = ops
      .filter((o) => o.permission !== "public" && o.permission !== "authenticated" && !((o.permission as string) in PERMISSIONS))
      .map((o) => `${o.method} ${o.path}: ${String(o.permission)}`);
    expect(unknown).toEqual([]);
    // "public" exactly on the declared public paths (src/auth/public-paths.ts) and the signed URLs outside /api/v1.
    const mismatched = ops
      .filter((o) => {
        const declaredPublic = !o.path.startsWith("/api/v1/") || isPublicApiPath(o.path.replace(/\{[^}]+\}/g, "x"));
        return (o.permission === "public") !== declaredPublic;
      })
      .map((o) => `${o.method} ${o.path}: ${String(o.permission)}`);
    expect(mismatched).toEqual([]);
  });

  it("every operation's security follows its permission, and every {name} of its path is a documented path parameter", async () => {
    type Op = { "x-permission"?: string; security?: Array<Record<string, string[]>>; parameters?: Array<{ name: string; in: string }> };
    const spec = (await (await fetchWorker("/openapi.json")).json()) as { paths: Record<string, Record<string, Op>> };
    const wrong: string[] = [];
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const p = op["x-permission"];
        const schemes = (op.security ?? []).map((s) => Object.keys(s).sort().join("+")).sort().join(",");
        // src/routes/define-route.ts: a scoped permission takes keys and sessions, an unscoped one sessions only.
        if (p && p in PERMISSIONS) {
          // A route may narrow it (POST /mcp takes keys only), never widen it.
          const allowed = "scope" in PERMISSIONS[p as Permission] ? ["bearerAuth", "sessionCookie"] : ["sessionCookie"];
          const used = schemes ? schemes.split(",") : [];
          if (!used.length || used.some((x) => !allowed.includes(x))) wrong.push(`${method} ${path}: ${p} → ${schemes}`);
        }
        for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
          if (!op.parameters?.some((x) => x.in === "path" && x.name === name)) wrong.push(`${method} ${path}: no path parameter ${name}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("a key without the declared scope (any key on a user-only route) gets 403 before validation", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const keys = new Map<string, string>();
    const keyWithout = async (scope: string | undefined) => {
      const name = scope ?? "(user-only)";
      if (!keys.has(name)) {
        const { key } = await createKey(org, { scopes: GRANTABLE.filter((s) => s !== scope) });
        keys.set(name, key);
      }
      return keys.get(name)!;
    };
    const ids: Record<string, string> = { organizations: org.id, environments: org.envId, tenants: org.tenantId, "knowledge-bases": kb.id };
    const idFor = (path: string, param: string) => {
      if (param === "tenantId") return org.tenantId;
      if (param === "orgId") return org.id;
      const group = path.replace(/^\/api\/v1\//, "").split("/")[0];
      return ids[group] ?? "x";
    };

    const failures: string[] = [];
    let checked = 0;
    for (const op of await operations()) {
      if (op.permission === "public" || op.permission === "authenticated") continue;
      const rule = PERMISSIONS[op.permission as Permission];
      const key = await keyWithout("scope" in rule ? rule.scope : undefined);
      const url = op.path.replace(/\{([^}]+)\}/g, (_, p: string) => idFor(op.path, p)).replace(/^\/api\/v1/, "") + JUNK_QUERY;
      const body = op.method === "GET" || op.method === "DELETE" ? undefined : JUNK_BODY;
      const r = await call(url.startsWith("/") ? url : `${BASE}${url}`, { key, method: op.method, body });
      checked++;
      if (r.status !== 403 || r.body?.error?.code !== "forbidden") {
        failures.push(`${op.method} ${op.path} (${String(op.permission)}) -> ${r.status} ${r.body?.error?.code}`);
      }
    }
    expect(checked).toBeGreaterThan(60);
    expect(failures).toEqual([]);
  }, 120_000);

  it("the same junk from a key that has the scope is a 400 (validation runs after the permission)", async () => {
    const org = await createOrg();
    const { key } = await createKey(org, { scopes: ["documents:write"] });
    const r = await call("/knowledge-bases", { key, body: JUNK_BODY });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
    const refused = await call("/knowledge-bases", { key: (await createKey(org, { scopes: ["documents:read"] })).key, body: JUNK_BODY });
    expect(refused.status).toBe(403);
  });
});

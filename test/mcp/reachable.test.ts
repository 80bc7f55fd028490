import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { trackCallerCheck } from "../../src/auth/caller-check";
import { CAPABILITIES } from "../../src/capabilities";
import { jobContext, type ServiceContext } from "../../src/contracts/context";
import { resolveApiKey } from "../../src/services/api-keys";
import { reachableKnowledgeBases } from "../../src/services/mcp/kb-server";
import { ApiError } from "../../src/lib/errors";
import { createKb, createKey, createOrg } from "../helpers";

/**
 * The knowledge bases an MCP connection (and GET /openai/models) lists are decided by the one access policy,
 * for each one (`may` → `authorize`, which first waits for a cached key's re-read): the query only narrows.
 */
async function keyContext(scopes: string[], extra: Record<string, unknown> = {}) {
  const org = await createOrg();
  const a = await createKb(org);
  const b = await createKb(org);
  const { key } = await createKey(org, { scopes, ...extra });
  const job = jobContext(env, { capabilities: CAPABILITIES, waitUntil: () => {} });
  const { caller } = await resolveApiKey(job.db, key);
  const ctx: ServiceContext = { db: job.db, env: job.env, config: job.config, capabilities: job.capabilities, waitUntil: job.waitUntil, requestId: null, caller };
  return { ctx, caller, a, b };
}

describe("the knowledge bases a key reaches over MCP", () => {
  it("are those the access policy allows", async () => {
    const { ctx, caller, a, b } = await keyContext(["query:rag"]);
    expect((await reachableKnowledgeBases(ctx, caller)).map((kb) => kb.id).sort()).toEqual([a.id, b.id].sort());
  });

  it("are none while the policy refuses the caller (a cached key whose re-read finds it revoked)", async () => {
    const { ctx, caller } = await keyContext(["query:rag"]);
    trackCallerCheck(ctx.db, Promise.reject(new ApiError("unauthorized", "This API key has been revoked")), () => {});
    expect(await reachableKnowledgeBases(ctx, caller)).toEqual([]);
  });
});

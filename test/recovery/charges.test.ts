import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { chargeStatements, type UsageRecordInput } from "../../src/services/billing/metering";
import { getModel } from "../../src/services/models/registry";
import { call, createOrg, createTenant, expectStatus } from "../helpers";

/**
 * A charge that grows while its answer streams (metering's chargeStatements): each checkpoint SETS what the turn
 * is charged, so any number of checkpoints, a replayed one and the final write charge the final amount exactly
 * once, and the usage log always adds up to the tenant's counter.
 */
const local = () => getModel(env, "local-extractive")!;

async function write(input: UsageRecordInput & { idempotencyKey: string }) {
  const d1 = createDb(env.DB).$client;
  const { statements, recorded } = chargeStatements(d1, input);
  await d1.batch(statements);
  return recorded;
}

describe("checkpointed charges", () => {
  it("checkpoints, a repeated one and the final write charge the final usage once", async () => {
    const org = await createOrg();
    const t = await createTenant(org, { credits_pool: 100 });
    const base = { organizationId: org.id, tenantId: t.id, operation: "chat" as const, model: "local-extractive", pricing: local().pricing, chatId: null, messageId: "msg_x", idempotencyKey: "turn:msg_x" };
    await write({ ...base, usage: { input_tokens: 1000, output_tokens: 100 } });
    await write({ ...base, usage: { input_tokens: 1000, output_tokens: 300 } });
    await write({ ...base, usage: { input_tokens: 1000, output_tokens: 300 } }); // the same checkpoint again
    const final = await write({ ...base, usage: { input_tokens: 1000, output_tokens: 500 } });
    expect(final.credits).toBe(1.5);
    const auth = { cookie: org.owner.cookie };
    const credits = expectStatus(await call(`/billing/tenants/${t.id}/credits`, auth), 200);
    expect(credits).toMatchObject({ credits_used: 1.5, credits_available: 98.5 });
    const logs = expectStatus(await call(`/billing/tenants/${t.id}/usage/logs`, auth), 200).logs;
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ input_tokens: 1000, output_tokens: 500, credits_used: 1.5, message_id: "msg_x" });
    const summary = expectStatus(await call(`/billing/tenants/${t.id}/usage/summary`, auth), 200);
    expect(summary).toMatchObject({ credits_used: 1.5, message_count: 1 });
  });

  it("a tenant deleted mid-answer: later checkpoints land on the organization's retired credits", async () => {
    const org = await createOrg();
    const t = await createTenant(org, { credits_pool: 100 });
    const base = { organizationId: org.id, tenantId: t.id, operation: "chat" as const, model: "local-extractive", pricing: local().pricing, idempotencyKey: "turn:msg_y" };
    await write({ ...base, usage: { input_tokens: 1000, output_tokens: 0 } });
    expectStatus(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie, method: "DELETE" }), 204);
    await write({ ...base, usage: { input_tokens: 1000, output_tokens: 1000 } });
    const billing = expectStatus(await call(`/billing/organizations/${org.id}`, { cookie: org.owner.cookie }), 200);
    const logged = await env.DB.prepare("SELECT SUM(credits_used) AS s FROM usage_logs WHERE organization_id = ?").bind(org.id).first<{ s: number }>();
    expect(logged!.s).toBe(2_000_000);
    expect(billing.used_credits).toBe(2);
  });
});

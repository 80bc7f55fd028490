import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { withSimulatedDistance } from "../../src/db/distance";
import type { Env } from "../../src/env";
import { withSimulatedHops } from "../../src/lib/distance";

/** The benchmark-only wrappers of bench:latency (src/lib/distance.ts, src/db/distance.ts) on the real bindings. */
const RTT = 60;
const elapsed = async (f: () => Promise<unknown>) => {
  const t0 = Date.now();
  await f();
  return Date.now() - t0;
};
const hopLines = (spy: ReturnType<typeof vi.spyOn>, kind: string) =>
  spy.mock.calls.filter((c: unknown[]) => String(c[0]).startsWith(`[hop] ${kind} `)).map((c: unknown[]) => String(c[0]).split(" @ ")[0]);

afterEach(() => vi.restoreAllMocks());

describe("simulated distance (bench:latency only)", () => {
  it("is no wrapper at all when nothing is set: the same environment and D1 binding", () => {
    const plain = { ...env } as Env;
    expect(withSimulatedHops(plain) === plain).toBe(true);
    expect(withSimulatedDistance(env.DB, undefined) === env.DB).toBe(true);
    expect(withSimulatedDistance(env.DB, "0", "") === env.DB).toBe(true);
  });

  it("adds the RTT to every D1 round trip; a batch is one", async () => {
    const db = withSimulatedDistance(env.DB, String(RTT));
    expect(await elapsed(() => db.prepare("SELECT ?1 AS x").bind(1).first())).toBeGreaterThanOrEqual(RTT);
    const batch = await elapsed(() => db.batch([db.prepare("SELECT 1"), db.prepare("SELECT 2")]));
    expect(batch).toBeGreaterThanOrEqual(RTT);
    expect(batch).toBeLessThan(2 * RTT);
    expect(await db.prepare("SELECT ?1 AS x").bind(7).first("x")).toBe(7);
  });

  it("adds the RTT to every Durable Object call (fetch and RPC, any namespace) and every R2 operation", async () => {
    const far = withSimulatedHops({ ...env, SIMULATED_DO_RTT_MS: String(RTT), SIMULATED_R2_RTT_MS: String(RTT) } as Env);
    // Other bindings are untouched.
    expect(far.DB === env.DB && far.INGEST_QUEUE === env.INGEST_QUEUE).toBe(true);

    const chat = far.CHAT_SESSION.get(far.CHAT_SESSION.idFromName(crypto.randomUUID()));
    let status = 0;
    expect(await elapsed(async () => (status = (await chat.fetch("https://chat/nowhere")).status))).toBeGreaterThanOrEqual(RTT);
    expect(status).toBe(404);

    const tables = far.KB_TABLES.getByName(crypto.randomUUID());
    let stats: unknown;
    expect(await elapsed(async () => (stats = await tables.stats()))).toBeGreaterThanOrEqual(RTT);
    expect(JSON.stringify(stats)).toMatch(/^{"tables":0,"databaseSize":\d+}$/);

    // An `agents` SDK object (the agent scheduler) through its RPC method.
    const scheduler = far.AGENT_SCHEDULER.get(far.AGENT_SCHEDULER.idFromName("agt_distance_none"));
    let armed: unknown;
    expect(await elapsed(async () => (armed = await scheduler.arm("agt_distance_none")))).toBeGreaterThanOrEqual(RTT);
    expect(JSON.stringify(armed)).toBe('{"next_run_at":null}');

    const key = `distance-test/${crypto.randomUUID()}`;
    expect(await elapsed(() => far.BUCKET.put(key, "hello"))).toBeGreaterThanOrEqual(RTT);
    let text = "";
    expect(await elapsed(async () => (text = (await (await far.BUCKET.get(key))!.text()) ?? ""))).toBeGreaterThanOrEqual(RTT);
    expect(text).toBe("hello");
    await far.BUCKET.delete(key);
  });

  it("wraps each environment once: what is cached per environment stays cached", () => {
    const e = { ...env, SIMULATED_DO_RTT_MS: "5" } as Env;
    // (Identity compared as booleans: a failing toBe would deep-compare the bindings.)
    expect(withSimulatedHops(e) === withSimulatedHops(e)).toBe(true);
    expect(withSimulatedHops(e) === e).toBe(false);
  });

  it("SIMULATED_HOPS_TRACE logs every hop, one line each, with the stack that made it (no delay needed)", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const traced = withSimulatedHops({ ...env, SIMULATED_HOPS_TRACE: "1" } as Env);
    const db = withSimulatedDistance(traced.DB, undefined, "1");
    await (async function madeBy() {
      await db.prepare("SELECT 1 AS one FROM (SELECT 1 AS one)").first();
    })();
    await db.batch([db.prepare("SELECT 1"), db.prepare("SELECT 2"), db.prepare("SELECT 3")]);
    await traced.KB_TABLES.getByName(crypto.randomUUID()).stats();
    await traced.BUCKET.head("distance-test/none");
    expect(hopLines(log, "d1")).toEqual(["[hop] d1 first select … from (SELECT 1 AS one)", "[hop] d1 batch of 3"]);
    expect(hopLines(log, "do")).toEqual(["[hop] do KB_TABLES.stats"]);
    expect(hopLines(log, "r2")).toEqual(["[hop] r2 BUCKET.head distance-test/none"]);
    // The line names the functions that made the hop.
    expect(String(log.mock.calls[0][0])).toMatch(/ @ .*madeBy/);
  });
});

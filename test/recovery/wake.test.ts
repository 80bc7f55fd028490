import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { wakeSupervisor } from "../../src/services/recovery/supervisor";

/** An env whose supervisor answers each wake after a moment, counting the calls. */
function countingEnv() {
  const calls: number[] = [];
  const stub = {
    wake: async (atMs: number) => {
      calls.push(atMs);
      await new Promise((r) => setTimeout(r, 20));
      return { alarm_at: atMs };
    },
  };
  const env = { SUPERVISOR: { idFromName: () => "supervisor", get: () => stub } } as unknown as Env;
  return { env, calls };
}

describe("wakeSupervisor", () => {
  it("makes one call for wakes that arrive while one for an earlier time is in flight", async () => {
    const { env, calls } = countingEnv();
    const base = Date.now() + 60_000;
    await Promise.all(Array.from({ length: 10 }, (_, i) => wakeSupervisor(env, base + i)));
    expect(calls).toEqual([base]);
  });

  it("still calls for a time earlier than the one in flight or known", async () => {
    const { env, calls } = countingEnv();
    const late = Date.now() + 45_000; // earlier than the alarm the first test left known
    const first = wakeSupervisor(env, late + 10);
    const earlier = wakeSupervisor(env, late);
    await Promise.all([first, earlier]);
    expect(calls).toEqual([late + 10, late]);
    await wakeSupervisor(env, Date.now() + 30_000); // earlier than the alarm now known
    expect(calls).toHaveLength(3);
  });
});

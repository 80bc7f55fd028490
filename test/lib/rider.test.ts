import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openSessionDb } from "../../src/db/session";
import { rawBatchItem } from "../../src/db/batch";
import { rideAlong, rideAlongOptionally } from "../../src/db/rider";

/**
 * A read that rides along a request's first database access (src/db/rider.ts): the re-read of a cached API key
 * goes in the request's first batch (one D1 call for both) or alone alongside its first statement. The D1 calls
 * are counted with the hop trace of bench:latency (src/db/distance.ts), which logs every round trip.
 */
afterEach(() => vi.restoreAllMocks());

function traced() {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const { db } = openSessionDb({ DB: env.DB, SIMULATED_HOPS_TRACE: "1" });
  const calls = () => log.mock.calls.map((c) => String(c[0])).filter((l) => l.startsWith("[hop] d1 ")).map((l) => l.split(" @ ")[0]);
  return { db, calls };
}
const one = (db: ReturnType<typeof traced>["db"], n: number) => db.select({ n: sql<number>`${n}` }).from(sql`(SELECT 1)`);

describe("a read riding along the request's first database access", () => {
  it("goes in the first batch: one D1 call; the batch answers without it and the rider gets its rows", async () => {
    const { db, calls } = traced();
    const riding = rideAlong(db, one(db, 7));
    const [a, b] = await db.batch([one(db, 1), one(db, 2)]);
    expect([a, b]).toEqual([[{ n: 1 }], [{ n: 2 }]]);
    expect(await riding.result).toEqual([{ n: 7 }]);
    expect(calls()).toEqual(["[hop] d1 batch of 3"]);
    // Sent once: asking again sends nothing, and the next batch is the route's own.
    riding.send();
    await db.batch([one(db, 3)]);
    expect(calls()).toEqual(["[hop] d1 batch of 3", "[hop] d1 batch of 1"]);
  });

  it("goes alone right after the first statement when that is not a batch, and only once", async () => {
    const { db, calls } = traced();
    const riding = rideAlong(db, one(db, 7));
    expect(await one(db, 1)).toEqual([{ n: 1 }]);
    expect(await riding.result).toEqual([{ n: 7 }]);
    await db.batch([one(db, 2)]);
    expect(calls()).toHaveLength(3);
    expect(calls()[2]).toBe("[hop] d1 batch of 1");
  });

  it("goes alone at once when sent (the authorization layer does before deciding), never twice", async () => {
    const { db, calls } = traced();
    const riding = rideAlong(db, one(db, 7));
    riding.send();
    riding.send();
    expect(await riding.result).toEqual([{ n: 7 }]);
    await db.batch([one(db, 1)]);
    expect(calls()).toHaveLength(2);
    expect(calls()[1]).toBe("[hop] d1 batch of 1");
  });

  it("fails with the batch it rode in", async () => {
    const { db } = traced();
    const riding = rideAlong(db, one(db, 7));
    const broken = db.select({ n: sql<number>`1` }).from(sql`no_such_table`);
    await expect(db.batch([broken])).rejects.toThrow(/no_such_table/);
    await expect(riding.result).rejects.toThrow(/no_such_table/);
  });

  it("takes optional riders (a turn's search) in the same batch, after the others; without them when they fail", async () => {
    const { db, calls } = traced();
    const riding = rideAlong(db, one(db, 7));
    const search = rideAlongOptionally(db, [rawBatchItem(db, sql`SELECT ${8} AS n`), rawBatchItem(db, sql`SELECT ${9} AS n`)]);
    expect(await db.batch([one(db, 1)])).toEqual([[{ n: 1 }]]);
    expect(await riding.result).toEqual([{ n: 7 }]);
    expect(((await search) as D1Result[]).map((r) => r.results)).toEqual([[{ n: 8 }], [{ n: 9 }]]);
    expect(calls()).toEqual(["[hop] d1 batch of 4"]);

    // A failing optional rider: the batch goes again without it, the others get their rows, it gets the error.
    const second = traced();
    const key = rideAlong(second.db, one(second.db, 7));
    const broken = expect(rideAlongOptionally(second.db, [rawBatchItem(second.db, sql`SELECT n FROM no_such_table`)])).rejects.toThrow(/no_such_table/);
    expect(await second.db.batch([one(second.db, 1)])).toEqual([[{ n: 1 }]]);
    expect(await key.result).toEqual([{ n: 7 }]);
    await broken;
    expect(second.calls().slice(-2)).toEqual(["[hop] d1 batch of 3", "[hop] d1 batch of 2"]);
  });

  it("sends an optional rider alone in the next microtask when no batch takes it in the same step", async () => {
    const { db, calls } = traced();
    const search = rideAlongOptionally(db, [rawBatchItem(db, sql`SELECT ${8} AS n`), rawBatchItem(db, sql`SELECT ${9} AS n`)]);
    await Promise.resolve();
    expect(((await search) as D1Result[]).map((r) => r.results)).toEqual([[{ n: 8 }], [{ n: 9 }]]);
    expect(await db.batch([one(db, 1)])).toEqual([[{ n: 1 }]]);
    expect(calls()).toEqual(["[hop] d1 batch of 2", "[hop] d1 batch of 1"]);
  });
});

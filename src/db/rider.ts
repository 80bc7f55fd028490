import type { Database } from "./client";

/**
 * A read that rides along with a request's own first database access instead of costing a D1 call of its own
 * (README "Latency"): the re-read of a cached caller (src/auth/caller-cache.ts). It is sent
 *   - inside the request's first drizzle batch, when the request's first access is one (`db.batch`): one D1
 *     call for both, the rider's statement last;
 *   - otherwise alone, right after the request's first statement is sent (alongside it, as before);
 *   - or alone when asked (`send`), e.g. by the authorization layer before it decides anything.
 * It is sent once, and never waits for anything but its own query. Only the request's database handle (the D1
 * session of src/db/session.ts, wrapped by `withRiders`) carries riders; a handle has at most one.
 */
type BatchItem = Parameters<Database["batch"]>[0][number];

interface Rider {
  query: BatchItem & PromiseLike<unknown>;
  resolve(rows: unknown): void;
  reject(e: unknown): void;
}

/** Keyed by the request's D1 binding (the handle's `$client`): its statements' wrapper finds the rider there. */
const riders = new WeakMap<object, { db: Database; rider: Rider }>();

export interface Riding<R> {
  /** The rider's result (the query's rows), however it was sent. */
  result: Promise<R>;
  /** Sends it alone now, unless it is already on its way. */
  send(): void;
}

/** Lets `query` ride along the request's first database access (see above). */
export function rideAlong<R>(db: Database, query: BatchItem & PromiseLike<R>): Riding<R> {
  let resolve!: (rows: R) => void;
  let reject!: (e: unknown) => void;
  const result = new Promise<R>((res, rej) => ((resolve = res), (reject = rej)));
  riders.set(db.$client, { db, rider: { query, resolve: resolve as (rows: unknown) => void, reject } });
  // The first batch takes the rider along (an own property over drizzle's method, removed once it has).
  Object.defineProperty(db, "batch", { configurable: true, writable: true, value: (queries: BatchItem[]) => batchWithRider(db, queries) });
  return { result, send: () => sendAlone(db.$client) };
}

function take(client: object): Rider | null {
  const entry = riders.get(client);
  if (!entry) return null;
  riders.delete(client);
  delete (entry.db as { batch?: unknown }).batch; // back to drizzle's own
  return entry.rider;
}

function sendAlone(client: object): void {
  const rider = take(client);
  if (rider) Promise.resolve(rider.query).then(rider.resolve, rider.reject);
}

async function batchWithRider(db: Database, queries: BatchItem[]) {
  const rider = take(db.$client);
  const run = (qs: BatchItem[]) => db.batch(qs as [BatchItem, ...BatchItem[]]);
  if (!rider) return run(queries);
  let results: unknown[];
  try {
    results = await run([...queries, rider.query]);
  } catch (e) {
    rider.reject(e);
    throw e;
  }
  rider.resolve(results[queries.length]);
  return results.slice(0, queries.length);
}

/**
 * The request's D1 binding with the hook that sends its rider alone once a statement is prepared outside a
 * rider's batch: in the next microtask, after the statement itself has been sent (drizzle prepares and sends
 * in one synchronous step), and never when a batch took the rider first.
 */
export function withRiders(d1: D1Database): D1Database {
  const wrapped: D1Database = new Proxy(d1, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver);
      if (typeof value !== "function") return value;
      if (prop === "prepare")
        return (query: string) => {
          if (riders.has(wrapped)) queueMicrotask(() => sendAlone(wrapped));
          return value.call(t, query);
        };
      return value.bind(t);
    },
  });
  return wrapped;
}

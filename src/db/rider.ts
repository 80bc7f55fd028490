import type { Database } from "./client";

/**
 * Reads that ride along with a request's own first database access instead of costing a D1 call of their own
 * (README "Latency"): the re-read of a cached caller (src/auth/caller-cache.ts), and a turn's search when its
 * statements are ready before the turn's read is sent (src/services/chats/search-ahead.ts). They are sent
 *   - inside the request's first drizzle batch, when the request's first access is one (`db.batch`): one D1
 *     call for all, the riders' statements last;
 *   - otherwise each alone, right after the request's first statement is sent (alongside it, as before);
 *   - or alone when asked (`send`), e.g. by the authorization layer before it decides anything.
 * Each is sent once, and never waits for anything but its own queries. Only the request's database handle (the
 * D1 session of src/db/session.ts, wrapped by `withRiders`) carries riders.
 *
 * A rider is `optional` when the request can do without it riding (the search, which runs alone again when it
 * cannot): if the batch fails, it is sent again without the optional riders, which fail with its error. A batch
 * is one transaction, so the failed attempt left nothing behind.
 */
type BatchItem = Parameters<Database["batch"]>[0][number];

interface Rider {
  queries: BatchItem[];
  optional: boolean;
  resolve(results: unknown[]): void;
  reject(e: unknown): void;
}

/** Keyed by the request's D1 binding (the handle's `$client`): its statements' wrapper finds the riders there. */
const riders = new WeakMap<object, { db: Database; riders: Rider[] }>();

export interface Riding<R> {
  /** The rider's result (the query's rows), however it was sent. */
  result: Promise<R>;
  /** Sends it alone now, unless it is already on its way. */
  send(): void;
}

/** Lets `query` ride along the request's first database access (see above). */
export function rideAlong<R>(db: Database, query: BatchItem & PromiseLike<R>): Riding<R> {
  const riding = ride(db, [query], false);
  return { result: riding.result.then(([rows]) => rows as R), send: riding.send };
}

/**
 * Lets `queries` ride along the request's first database access, as an optional rider (see above), when that
 * access is a batch sent in this same synchronous step; otherwise they are sent alone in the next microtask.
 */
export function rideAlongOptionally(db: Database, queries: BatchItem[]): Promise<unknown[]> {
  const riding = ride(db, queries, true);
  queueMicrotask(riding.send);
  return riding.result;
}

function ride(db: Database, queries: BatchItem[], optional: boolean): Riding<unknown[]> {
  let resolve!: (results: unknown[]) => void;
  let reject!: (e: unknown) => void;
  const result = new Promise<unknown[]>((res, rej) => ((resolve = res), (reject = rej)));
  const rider: Rider = { queries, optional, resolve, reject };
  const entry = riders.get(db.$client);
  if (entry) entry.riders.push(rider);
  else riders.set(db.$client, { db, riders: [rider] });
  // The first batch takes the riders along (an own property over drizzle's method, removed once it has).
  Object.defineProperty(db, "batch", { configurable: true, writable: true, value: (qs: BatchItem[]) => batchWithRiders(db, qs) });
  return { result, send: () => sendAlone(db.$client, rider) };
}

/** Takes the client's riders (all, or the one given), leaving the others waiting. */
function take(client: object, only?: Rider): Rider[] {
  const entry = riders.get(client);
  if (!entry) return [];
  const taken = only ? entry.riders.filter((r) => r === only) : entry.riders;
  entry.riders = only ? entry.riders.filter((r) => r !== only) : [];
  if (!entry.riders.length) {
    riders.delete(client);
    delete (entry.db as { batch?: unknown }).batch; // back to drizzle's own
  }
  return taken;
}

function sendAlone(client: object, only?: Rider): void {
  const entry = riders.get(client);
  if (!entry) return;
  for (const rider of take(client, only)) runBatch(entry.db, rider.queries).then(rider.resolve, rider.reject);
}

/** The queries in one batch (riders still waiting join it), or the one query alone. */
function runBatch(db: Database, queries: BatchItem[]): Promise<unknown[]> {
  if (queries.length === 1) return Promise.resolve(queries[0] as unknown as PromiseLike<unknown>).then((rows) => [rows]);
  return db.batch(queries as [BatchItem, ...BatchItem[]]) as unknown as Promise<unknown[]>;
}

async function batchWithRiders(db: Database, queries: BatchItem[]): Promise<unknown[]> {
  const taken = take(db.$client);
  const optional = taken.filter((r) => r.optional);
  if (optional.length) {
    try {
      return await sendWith(db, queries, taken, false);
    } catch (e) {
      for (const r of optional) r.reject(e); // the others go again without them
    }
  }
  return sendWith(db, queries, taken.filter((r) => !r.optional), true);
}

/** The batch with the riders' queries after its own: each rider gets its results (and, when `last`, the error). */
async function sendWith(db: Database, queries: BatchItem[], riding: Rider[], last: boolean): Promise<unknown[]> {
  let results: unknown[];
  try {
    results = (await db.batch([...queries, ...riding.flatMap((r) => r.queries)] as [BatchItem, ...BatchItem[]])) as unknown[];
  } catch (e) {
    if (last) for (const r of riding) r.reject(e);
    throw e;
  }
  let at = queries.length;
  for (const r of riding) {
    r.resolve(results.slice(at, at + r.queries.length));
    at += r.queries.length;
  }
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

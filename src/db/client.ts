import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";
import { withSimulatedDistance, type SimulatedDb } from "./distance";

/**
 * A drizzle handle on a D1 binding or session. Without `{ schema }`: the relational query API (`db.query.*`) is
 * not used, and building its config from the schema cost every request and turn ~0.6 ms of CPU (bench:cpu).
 */
export function createDb(d1: D1Database) {
  return drizzle(d1);
}

export type Database = ReturnType<typeof createDb>;

/** The database of a request, job or Durable Object (with the benchmark's simulated distance when configured). */
export const openDb = (env: SimulatedDb) => createDb(withSimulatedDistance(env.DB, env.SIMULATED_D1_RTT_MS, env.SIMULATED_HOPS_TRACE));
export { schema };

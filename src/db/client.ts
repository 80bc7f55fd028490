import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";
import { withSimulatedDistance } from "./distance";

export function createDb(d1: D1Database) {
  return drizzle(d1, { schema });
}

export type Database = ReturnType<typeof createDb>;

/** The database of a request, job or Durable Object (with the benchmark's simulated distance when configured). */
export const openDb = (env: { DB: D1Database; SIMULATED_D1_RTT_MS?: string }) => createDb(withSimulatedDistance(env.DB, env.SIMULATED_D1_RTT_MS));
export { schema };

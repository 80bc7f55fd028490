import { hopGate } from "../lib/distance";

/** The database binding and the benchmark's variables for it. */
export interface SimulatedDb {
  DB: D1Database;
  SIMULATED_D1_RTT_MS?: string;
  SIMULATED_HOPS_TRACE?: string;
}

/** A statement as a trace line shows it: the column list of a select left out. */
const brief = (sql: string) => sql.replace(/\s+/g, " ").replace(/^ ?select .*? from /i, "select … from ").slice(0, 200);

/**
 * Simulated distance to the database, for `npm run bench:latency` only: with SIMULATED_D1_RTT_MS set
 * (never in production; the benchmark passes it with --var), every D1 round trip — a statement's
 * first/all/run/raw or a batch — waits that many milliseconds before it runs, as a Worker far from its
 * database would. SIMULATED_HOPS_TRACE=1 logs each round trip (its SQL) with the stack that made it
 * (src/lib/distance.ts has the Durable Object and R2 hops). Unset, the binding is returned untouched.
 */
export function withSimulatedDistance(d1: D1Database, rttMs: string | undefined, trace?: string): D1Database {
  const gate = hopGate("d1", rttMs, trace);
  if (!gate) return d1;
  const delayed = <T extends object>(target: T, methods: readonly string[], sql: string): T =>
    new Proxy(target, {
      get(t, prop, receiver) {
        const value = Reflect.get(t, prop, receiver);
        if (typeof value !== "function") return value;
        if (methods.includes(String(prop))) return async (...args: unknown[]) => (await gate(`${String(prop)} ${sql}`), value.apply(t, args));
        if (prop === "bind") return (...args: unknown[]) => delayed(value.apply(t, args) as object, STATEMENT, sql);
        return value.bind(t);
      },
    });
  const STATEMENT = ["first", "all", "run", "raw"] as const;
  return new Proxy(d1, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver);
      if (typeof value !== "function") return value;
      if (prop === "prepare") return (sql: string) => delayed(value.call(t, sql) as object, STATEMENT, brief(sql));
      if (prop === "batch")
        return async (...args: unknown[]) => (await gate(`batch of ${(args[0] as unknown[]).length}`), value.apply(t, args));
      return value.bind(t);
    },
  }) as D1Database;
}

/**
 * Simulated distance to the database, for `npm run bench:latency` only: with SIMULATED_D1_RTT_MS set
 * (never in production; the benchmark passes it with --var), every D1 round trip — a statement's
 * first/all/run/raw or a batch — waits that many milliseconds before it runs, as a Worker far from its
 * database would. Unset, the binding is returned untouched.
 */
export function withSimulatedDistance(d1: D1Database, rttMs: string | undefined): D1Database {
  const rtt = Number(rttMs ?? 0);
  if (!(rtt > 0)) return d1;
  const wait = () => new Promise((r) => setTimeout(r, rtt));
  const delayed = <T extends object>(target: T, methods: readonly string[]): T =>
    new Proxy(target, {
      get(t, prop, receiver) {
        const value = Reflect.get(t, prop, receiver);
        if (typeof value !== "function") return value;
        if (methods.includes(String(prop))) return async (...args: unknown[]) => (await wait(), value.apply(t, args));
        if (prop === "bind") return (...args: unknown[]) => delayed(value.apply(t, args) as object, STATEMENT);
        return value.bind(t);
      },
    });
  const STATEMENT = ["first", "all", "run", "raw"] as const;
  return new Proxy(d1, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver);
      if (typeof value !== "function") return value;
      if (prop === "prepare") return (sql: string) => delayed(value.call(t, sql) as object, STATEMENT);
      if (prop === "batch") return async (...args: unknown[]) => (await wait(), value.apply(t, args));
      return value.bind(t);
    },
  }) as D1Database;
}

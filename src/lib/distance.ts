/**
 * Simulated distance, for `npm run bench:latency` only (never set in production; the benchmark passes the
 * variables with --var). Three kinds of hop, each with its own variable:
 *   - SIMULATED_D1_RTT_MS: every D1 round trip (src/db/distance.ts);
 *   - SIMULATED_DO_RTT_MS: every call on a Durable Object stub (its fetch and every RPC method), of every
 *     namespace in the environment (chat sessions, the supervisor, the agent scheduler, tables, the vector index);
 *   - SIMULATED_R2_RTT_MS: every R2 bucket operation (head, get, put, delete, list, createMultipartUpload).
 * A hop waits that many milliseconds before it is made, as a Worker far from the database, the object or the
 * bucket would. SIMULATED_HOPS_TRACE=1 also logs every hop of a wrapped kind with the stack that made it (to
 * find where a path's round trips come from). With none of them set, the bindings are returned untouched.
 */

export type HopKind = "d1" | "do" | "r2";

/** What a wrapper does before a hop: wait the simulated time, and log the hop when tracing. Null: no wrapper. */
export type HopGate = (what: string) => Promise<void>;

/** The gate of one kind of hop, or null when neither its delay nor tracing is configured. */
export function hopGate(kind: HopKind, rttMs: string | undefined, trace: string | undefined): HopGate | null {
  const rtt = Number(rttMs ?? 0);
  const tracing = !!trace && trace !== "0";
  if (!(rtt > 0) && !tracing) return null;
  return async (what) => {
    if (tracing) console.log(`[hop] ${kind} ${what.replace(/\s+/g, " ")} @ ${callerStack()}`);
    if (rtt > 0) await new Promise((r) => setTimeout(r, rtt));
  };
}

/** Frames that are the database driver's or this wrapper's, not the code that made the hop. */
const PLUMBING = /^(callerStack|query|Object\.<anonymous>|null\.<anonymous>|async |dispatch\d*|D1Prepared|SQLite|QueryPromise|Drizzle|Reflect|Proxy|Promise)/;

/** Who made a hop, innermost first: the function names of its stack (names survive bundling; paths do not). */
function callerStack(): string {
  const names = (new Error().stack ?? "")
    .split("\n")
    .map((l) => /^\s*at (?:async )?([^\s(]+)/.exec(l)?.[1] ?? "")
    .filter((n) => n && !PLUMBING.test(n));
  return names.slice(0, 6).join(" < ");
}

/** The variables this file reads (a subset of Env, so tests can pass plain objects). */
export interface DistanceVars {
  SIMULATED_DO_RTT_MS?: string;
  SIMULATED_R2_RTT_MS?: string;
  SIMULATED_HOPS_TRACE?: string;
}

const wrappedEnvs = new WeakMap<object, object>();

/**
 * The environment with its Durable Object namespaces and R2 buckets wrapped (SIMULATED_DO_RTT_MS,
 * SIMULATED_R2_RTT_MS). Installed by every entry point (src/index.ts) and the Durable Objects that call others
 * (their constructors). Unset: `env` itself. The same wrapped object per environment, so what is cached per
 * environment (the parsed configuration) stays cached.
 */
export function withSimulatedHops<E extends DistanceVars>(env: E): E {
  if (!env.SIMULATED_DO_RTT_MS && !env.SIMULATED_R2_RTT_MS && !env.SIMULATED_HOPS_TRACE) return env;
  const known = wrappedEnvs.get(env);
  if (known) return known as E;
  const doGate = hopGate("do", env.SIMULATED_DO_RTT_MS, env.SIMULATED_HOPS_TRACE);
  const r2Gate = hopGate("r2", env.SIMULATED_R2_RTT_MS, env.SIMULATED_HOPS_TRACE);
  const out: Record<string, unknown> = { ...(env as object) };
  for (const [name, binding] of Object.entries(env)) {
    if (doGate && isNamespace(binding)) out[name] = delayedNamespace(binding, name, doGate);
    else if (r2Gate && isBucket(binding)) out[name] = delayedBucket(binding, name, r2Gate);
  }
  wrappedEnvs.set(env, out);
  return out as E;
}

const isNamespace = (b: unknown): b is DurableObjectNamespace =>
  !!b && typeof b === "object" && typeof (b as DurableObjectNamespace).idFromName === "function" && typeof (b as DurableObjectNamespace).get === "function";
const isBucket = (b: unknown): b is R2Bucket =>
  !!b && typeof b === "object" && typeof (b as R2Bucket).createMultipartUpload === "function" && typeof (b as R2Bucket).head === "function";

/** A namespace whose stubs (get, getByName, and those of its jurisdictions) wait before each call. */
export function delayedNamespace<N extends object>(ns: N, name: string, gate: HopGate): N {
  return new Proxy(ns, {
    get(t, prop) {
      const value = Reflect.get(t, prop) as unknown;
      if (typeof value !== "function") return value;
      if (prop === "get" || prop === "getByName") return (...args: unknown[]) => delayedStub(Reflect.apply(value, t, args) as object, name, gate);
      if (prop === "jurisdiction") return (...args: unknown[]) => delayedNamespace(Reflect.apply(value, t, args) as object, name, gate);
      return value.bind(t);
    },
  });
}

/** Stub members that are not calls to the object. */
const LOCAL = new Set(["then", "dup", "constructor", "toString", "toJSON", "valueOf"]);

/** `target` with the methods `waits` picks waiting at `gate` (labelled by `label`) before they go out; the others as they are. */
function delayedCalls<T extends object>(target: T, waits: (prop: string) => boolean, gate: HopGate, label: (prop: string, args: unknown[]) => string): T {
  return new Proxy(target, {
    get(t, prop) {
      const value = Reflect.get(t, prop) as unknown;
      if (typeof value !== "function") return value;
      // Reflect.apply, not value.apply: on a stub, every property (`apply` too) is a remote method.
      if (typeof prop !== "string" || !waits(prop)) return (...args: unknown[]) => Reflect.apply(value, t, args);
      return async (...args: unknown[]) => {
        await gate(label(prop, args));
        return Reflect.apply(value, t, args);
      };
    },
  });
}

/** A stub whose fetch and RPC methods wait before the call (the call then goes out as it would). */
export function delayedStub<S extends object>(stub: S, name: string, gate: HopGate): S {
  return delayedCalls(stub, (prop) => !LOCAL.has(prop), gate, (prop) => `${name}.${prop}`);
}

const BUCKET_CALLS = new Set(["head", "get", "put", "delete", "list", "createMultipartUpload"]);

/** A bucket whose operations wait before they go out. */
export function delayedBucket<B extends object>(bucket: B, name: string, gate: HopGate): B {
  return delayedCalls(bucket, (prop) => BUCKET_CALLS.has(prop), gate, (prop, args) => `${name}.${prop}${typeof args[0] === "string" ? ` ${args[0]}` : ""}`);
}

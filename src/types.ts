import type { Caller } from "./contracts/caller";
import type { Capabilities } from "./contracts/tools";
import type { Database } from "./db/client";
import type { Env } from "./env";

/** Hono environment of every router: bindings plus per-request variables. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    db: Database;
    /**
     * Resolved by the authentication middleware, which answers 401 itself for
     * an anonymous request on any non-public path: authenticated handlers
     * always have a caller. Public handlers use `optionalCaller(c)`.
     */
    caller: Caller;
    /** The capability registry (src/capabilities.ts), set once by the app for its services. */
    capabilities: Capabilities;
  };
};

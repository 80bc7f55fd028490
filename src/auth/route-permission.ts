import type { MiddlewareHandler } from "hono";
import { ctxOf } from "../routes/context";
import type { AppEnv } from "../types";
import { assertPermissionClass, requireCaller } from "./authorize";
import type { Permission } from "./permissions";

/**
 * The permission class of a route, declared beside its path:
 *   createRoute({ ..., ...routePermission("documents:read"), ... })
 * which sets the route middleware and an `x-permission` extension in /openapi.json.
 * It runs before validation: a key without the scope, or a key on a user-only
 * route, is refused (403) before its input is looked at. Resource reach and
 * roles are checked later by `authorize()` / `loadAuthorized()` once the
 * resource is known. `public` routes declare "public"; `authenticated` routes
 * need any caller and authorize nothing further (for example GET /me).
 */
export type RoutePermission = Permission | "public" | "authenticated";

export function permission(p: RoutePermission): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (p !== "public") {
      const caller = requireCaller(ctxOf(c));
      if (p !== "authenticated") assertPermissionClass(caller, p);
    }
    await next();
  };
}

/** Spread into createRoute: the middleware plus an `x-permission` extension in /openapi.json. */
export function routePermission<P extends RoutePermission>(p: P) {
  return { middleware: permission(p), "x-permission": p } as const;
}

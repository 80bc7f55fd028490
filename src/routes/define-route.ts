import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import { PERMISSIONS, type Permission } from "../auth/permissions";
import { routePermission, type RoutePermission } from "../auth/route-permission";
import { errorResponses, userOnly, userOrKey } from "../lib/openapi";

type Method = RouteConfig["method"];

/** What a route states itself; the rest is derived from its path, permission and group. */
type RouteSpec = Omit<RouteConfig, "method" | "path" | "tags" | "middleware">;

/** `"/a/{id}/b/{memoryId}"` → `"id" | "memoryId"`. */
type PathParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | PathParamNames<Rest> : never;

/** The request a route gets: its own `params` if it states them, else one id string per `{name}` of its path. */
type DerivedRequest<P extends string, S extends RouteSpec> = S extends { request: { params: unknown } }
  ? S["request"]
  : [PathParamNames<P>] extends [never]
    ? S extends { request: infer Q } ? Q : undefined
    : (S extends { request: infer Q } ? Q : unknown) & { params: z.ZodObject<{ [K in PathParamNames<P>]: z.ZodString }> };

/** An id in a path: what every `{id}`-like segment accepts unless a route says otherwise. */
const pathId = (name: string) => z.string().min(1).max(128).openapi({ param: { name, in: "path" } });

function pathParams(path: string) {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  return names.length ? z.object(Object.fromEntries(names.map((n) => [n, pathId(n)]))) : undefined;
}

/**
 * Who may present credentials, derived from the permission: a permission with an API-key scope is
 * for users and keys, one without is for signed-in users only, `authenticated` takes either, and
 * `public` declares none. A route states `security` itself only when it differs (for example a
 * public route that reads an optional session).
 */
function securityFor(permission: RoutePermission): RouteConfig["security"] {
  if (permission === "public") return undefined;
  if (permission === "authenticated") return userOrKey;
  return "scope" in PERMISSIONS[permission as Permission] ? userOrKey : userOnly;
}

/**
 * The one way to define an operation. A group makes its definer once, with its OpenAPI tags:
 *
 *   const route = routesTagged(["Memory"]);
 *   const getSettings = route("get", "/tenants/{id}/memory-settings", "memory:read", {
 *     operationId: "getTenantMemorySettings", summary: "The tenant's resolved memory settings",
 *     responses: { 200: jsonContent(MemorySettingsSchema, "Memory settings") },
 *   });
 *
 * Each definition then carries its permission class as route middleware (it runs before validation
 * and shows as `x-permission` in /openapi.json), the security derived from that permission, the
 * error responses every route may give (add rarer ones with `...extraErrors(402)`), and path
 * parameters read from the path (`{id}` → a 1–128 character string) unless `request.params` says more.
 */
export function routesTagged(tags: string[]) {
  return <M extends Method, P extends string, S extends RouteSpec>(method: M, path: P, permission: RoutePermission, spec: S) => {
    const params = spec.request?.params ?? pathParams(path);
    const config = {
      security: securityFor(permission),
      ...spec,
      ...(params ? { request: { ...spec.request, params } } : {}),
      method,
      path,
      tags,
      ...routePermission(permission),
      responses: { ...errorResponses, ...spec.responses },
    };
    return createRoute(config as Omit<typeof config, "request"> & { request: DerivedRequest<P, S> });
  };
}

import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, ApiError, unwrap, type Schemas } from "./api/client";

export type Role = "owner" | "billing_admin" | "developer" | "viewer";
export type Me = Extract<Schemas["Me"], { type: "user" }>;

/** The signed-in user and their organizations (GET /me); null when nobody is signed in. */
export function useMe() {
  return useQuery({
    queryKey: ["me"],
    queryFn: async (): Promise<Me | null> => {
      try {
        const me = await unwrap(api.GET("/api/v1/me"));
        return me.type === "user" ? (me as Me) : null;
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) return null;
        throw e;
      }
    },
    staleTime: 30_000,
  });
}

export function useEnvironments(orgId: string) {
  return useQuery({
    queryKey: ["environments", orgId],
    queryFn: () => unwrap(api.GET("/api/v1/organizations/{id}/environments", { params: { path: { id: orgId } } })),
  });
}

export function useTenants(envId: string | undefined) {
  return useQuery({
    queryKey: ["tenants", envId],
    enabled: !!envId,
    queryFn: () => unwrap(api.GET("/api/v1/tenants", { params: { query: { env_id: envId!, limit: 100 } } })),
  });
}

function stored(key: string): string | undefined {
  try {
    return localStorage.getItem(key) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The environment and tenant the console works in for an organization: the organization's defaults until
 * the user picks others (remembered in this browser). Knowledge bases live in a tenant.
 */
export function useScope(orgId: string) {
  const key = `console.scope.${orgId}`;
  const [picked, setPicked] = useState<{ env?: string; tenant?: string }>(() => JSON.parse(stored(key) ?? "{}"));
  useEffect(() => setPicked(JSON.parse(stored(key) ?? "{}")), [key]);
  const envs = useEnvironments(orgId);
  const envList = envs.data?.environments ?? [];
  const envId = envList.find((e) => e.id === picked.env)?.id ?? envList.find((e) => e.is_default)?.id ?? envList[0]?.id;
  const tenants = useTenants(envId);
  const tenantList = tenants.data?.tenants ?? [];
  const tenantId = tenantList.find((t) => t.id === picked.tenant)?.id ?? tenantList.find((t) => t.is_default)?.id ?? tenantList[0]?.id;
  const save = (next: { env?: string; tenant?: string }) => {
    setPicked(next);
    try {
      localStorage.setItem(key, JSON.stringify(next));
    } catch {
      /* private mode: the choice lasts for this page */
    }
  };
  return {
    envs: envList,
    envId,
    tenants: tenantList,
    tenantId,
    tenant: tenantList.find((t) => t.id === tenantId),
    loading: envs.isLoading || tenants.isLoading,
    error: envs.error ?? tenants.error,
    setEnv: (env: string) => save({ env }),
    setTenant: (tenant: string) => save({ env: envId, tenant }),
  };
}

export const ROLE_LABELS: Record<Role, string> = {
  owner: "Owner",
  billing_admin: "Billing admin",
  developer: "Developer",
  viewer: "Viewer",
};

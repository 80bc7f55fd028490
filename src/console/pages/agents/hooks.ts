import { useQuery } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../../api/client";

export type Agent = Schemas["Agent"];
export type AgentRun = Schemas["AgentRun"];
export type AgentVersion = Schemas["AgentVersion"];

export function useModels() {
  return useQuery({ queryKey: ["models"], queryFn: () => unwrap(api.GET("/api/v1/chats/models")), staleTime: 60_000 });
}

export function useAgents(tenantId: string | undefined, status: "active" | "archived" = "active") {
  return useQuery({
    queryKey: ["agents", tenantId, status],
    enabled: !!tenantId,
    queryFn: () => unwrap(api.GET("/api/v1/agents", { params: { query: { tenant_id: tenantId!, status, limit: 100 } } })),
  });
}

export function useAgent(agentId: string) {
  return useQuery({ queryKey: ["agent", agentId], queryFn: () => unwrap(api.GET("/api/v1/agents/{id}", { params: { path: { id: agentId } } })) });
}

/** The organization's MCP registrations (also offered to agents and chats). */
export function useMcpServers(orgId: string, live = false) {
  return useQuery({
    queryKey: ["mcp-servers", orgId],
    queryFn: () => unwrap(api.GET("/api/v1/mcp/servers", { params: { query: { org_id: orgId } } })),
    // Discovery runs after registration: poll while any registration is still pending.
    refetchInterval: (q) => (live && q.state.data?.servers.some((s) => s.status === "pending") ? 1000 : false),
  });
}

/** A knowledge base's registered external (A2A) agents. */
export function useA2aAgents(kbId: string | undefined) {
  return useQuery({
    queryKey: ["a2a-agents", kbId],
    enabled: !!kbId,
    queryFn: () => unwrap(api.GET("/api/v1/knowledge-bases/{id}/a2a-agents", { params: { path: { id: kbId! } } })),
  });
}

/** Whether a run may still change (the page keeps polling while it may). */
export const inFlight = (r: { status: string }) => r.status === "queued" || r.status === "running";

export const RUN_TONE: Record<AgentRun["status"], "neutral" | "good" | "bad" | "busy"> = {
  queued: "busy",
  running: "busy",
  completed: "good",
  failed: "bad",
  cancelled: "neutral",
};

import { API, call, expectStatus, fetchWorker, type Auth } from "../helpers";

export const agentBody = (kb: { id: string; tenant_id: string }, extra: Record<string, unknown> = {}) => ({
  tenant_id: kb.tenant_id,
  knowledge_base_id: kb.id,
  name: "Refund helper",
  goal: "Answer questions about refunds from the handbook",
  instructions: "Be brief and cite the handbook.",
  model: "local-extractive",
  agent_mode: "quick",
  ...extra,
});

export async function createAgent(auth: Auth, kb: { id: string; tenant_id: string }, extra: Record<string, unknown> = {}) {
  return expectStatus(await call("/agents", { ...auth, body: agentBody(kb, extra) }), 201);
}

export async function runAgent(auth: Auth, agentId: string, body: Record<string, unknown>) {
  return call(`/agents/${agentId}/messages`, { ...auth, body });
}

export async function streamAgent(auth: Auth, agentId: string, body: Record<string, unknown>) {
  const h: Record<string, string> = { "Content-Type": "application/json" };
  if (auth.cookie) h.Cookie = auth.cookie;
  if (auth.key) h.Authorization = `Bearer ${auth.key}`;
  return fetchWorker(`${API}/agents/${agentId}/messages/stream`, { method: "POST", headers: h, body: JSON.stringify(body) });
}

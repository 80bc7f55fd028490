import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { api, unwrap } from "../../api/client";
import { Badge, ErrorNote } from "../../ui/ui";
import { useA2aAgents, useMcpServers } from "../agents/hooks";
import "../agents/agents.css";

/** What a question is asked with besides the knowledge base: the chat's MCP servers and A2A agents to delegate to. */
export interface ToolChoice {
  /** MCP servers to enable on a chat the first question creates. */
  mcpServerIds: string[];
  /** External agents the model may delegate to (sent with each question). */
  delegateIds: string[];
}

/** The MCP servers enabled on an open chat (saved on the chat at once), or chosen for the chat the next question opens. */
function ChatMcp({ orgId, chatId, choice, set }: { orgId: string; chatId: string | null; choice: ToolChoice; set: (c: ToolChoice) => void }) {
  const qc = useQueryClient();
  const all = useMcpServers(orgId);
  const onChat = useQuery({
    queryKey: ["chat-mcp", chatId],
    enabled: !!chatId,
    queryFn: () => unwrap(api.GET("/api/v1/chats/{id}/mcp-servers", { params: { path: { id: chatId! } } })),
  });
  const save = useMutation({
    mutationFn: (ids: string[]) => unwrap(api.PATCH("/api/v1/chats/{id}/mcp-servers", { params: { path: { id: chatId! } }, body: { enabled_mcp_server_ids: ids } })),
    onSuccess: (d) => qc.setQueryData(["chat-mcp", chatId], d),
  });
  const servers = chatId ? (onChat.data?.servers ?? []) : (all.data?.servers ?? []).map((s) => ({ ...s, enabled: choice.mcpServerIds.includes(s.id) }));
  const enabled = servers.filter((s) => s.enabled).map((s) => s.id);
  const toggle = (id: string) => {
    const next = enabled.includes(id) ? enabled.filter((x) => x !== id) : [...enabled, id];
    if (chatId) save.mutate(next);
    else set({ ...choice, mcpServerIds: next });
  };
  return (
    <fieldset>
      <legend>MCP servers {chatId ? "of this chat" : "for the new chat"}</legend>
      {!servers.length && <p className="muted small">None registered: add one under MCP servers.</p>}
      {servers.map((s) => (
        <label key={s.id} className="check">
          <input type="checkbox" checked={s.enabled} disabled={save.isPending} onChange={() => toggle(s.id)} />
          {s.name} <Badge tone={s.status === "ready" ? "good" : "bad"}>{s.status === "ready" ? `${s.tool_count} tools` : s.status.replace("_", " ")}</Badge>
        </label>
      ))}
      <ErrorNote error={save.error ?? onChat.error ?? all.error} />
    </fieldset>
  );
}

function Delegates({ kbId, choice, set }: { kbId: string; choice: ToolChoice; set: (c: ToolChoice) => void }) {
  const a2a = useA2aAgents(kbId);
  const list = a2a.data?.a2a_agents ?? [];
  // A registration removed elsewhere is no longer offered.
  useEffect(() => {
    if (a2a.data && choice.delegateIds.some((id) => !list.some((a) => a.id === id))) set({ ...choice, delegateIds: choice.delegateIds.filter((id) => list.some((a) => a.id === id)) });
  }, [a2a.data, choice, list, set]);
  return (
    <fieldset>
      <legend>External agents to delegate to</legend>
      {!list.length && <p className="muted small">None registered for this knowledge base: add one under External agents.</p>}
      {list.map((a) => (
        <label key={a.id} className="check">
          <input type="checkbox" checked={choice.delegateIds.includes(a.id)} onChange={() => set({ ...choice, delegateIds: choice.delegateIds.includes(a.id) ? choice.delegateIds.filter((x) => x !== a.id) : [...choice.delegateIds, a.id] })} />
          {a.name} {a.status !== "ready" && <Badge tone="bad">{a.status}</Badge>}
        </label>
      ))}
      <ErrorNote error={a2a.error} />
    </fieldset>
  );
}

/** The playground's tools: MCP servers per chat and A2A agents to delegate to (used in deep mode). */
export function ToolsPanel({ orgId, kbId, chatId, choice, set }: { orgId: string; kbId: string; chatId: string | null; choice: ToolChoice; set: (c: ToolChoice) => void }) {
  return (
    <details className="tools-panel">
      <summary>Tools: MCP servers and external agents</summary>
      <p className="muted small">Deep mode decides when to call them; each call shows among the answer's steps.</p>
      <ChatMcp orgId={orgId} chatId={chatId} choice={choice} set={set} />
      <Delegates kbId={kbId} choice={choice} set={set} />
    </details>
  );
}

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { Badge, Button, confirmed, Dialog, Empty, ErrorNote, Field, Loading, Notice, formatDate } from "../../ui/ui";
import { useMcpServers } from "../agents/hooks";
import { authorizeInPopup } from "./oauth-window";

type McpServer = Schemas["McpServer"];

/** The registration's status in words. */
export function statusInWords(s: McpServer): { tone: "neutral" | "good" | "bad" | "busy"; label: string; words: string } {
  switch (s.status) {
    case "pending":
      return { tone: "busy", label: "discovering", words: "Connecting and listing its tools…" };
    case "ready":
      return { tone: "good", label: "ready", words: `Connected: ${s.tool_count} tool${s.tool_count === 1 ? "" : "s"}${s.manifest_refreshed_at ? `, listed ${formatDate(s.manifest_refreshed_at)}` : ""}.` };
    case "needs_auth":
      return { tone: "bad", label: "needs authorization", words: "The server asks you to sign in before it lists its tools: authorize it." };
    default:
      return { tone: "bad", label: s.status, words: s.last_error ?? "The server could not be reached." };
  }
}

function Register({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [credentials, setCredentials] = useState("");
  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/mcp/servers", { params: { query: { org_id: orgId } }, body: { name, url, credentials: credentials || undefined } })),
    onSuccess: () => {
      setName("");
      setUrl("");
      setCredentials("");
      void qc.invalidateQueries({ queryKey: ["mcp-servers", orgId] });
    },
  });
  return (
    <form className="card form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
      <h2>Register an MCP server</h2>
      <div className="inline-form">
        <Field label="Server name" required value={name} onChange={(e) => setName(e.target.value)} placeholder="Issue tracker" />
        <Field label="Server URL" required type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://mcp.example.com/mcp" />
      </div>
      <Field label="Bearer credential (optional)" type="password" autoComplete="off" value={credentials} onChange={(e) => setCredentials(e.target.value)} hint="Sent as Authorization: Bearer …; stored encrypted and never shown again. Servers that sign in by OAuth need none." />
      <ErrorNote error={create.error} />
      <Button type="submit" variant="primary" busy={create.isPending}>Register server</Button>
    </form>
  );
}

/** The tools of a registration with their input schemas. */
function Tools({ orgId, server }: { orgId: string; server: McpServer }) {
  const tools = useQuery({
    queryKey: ["mcp-tools", server.id, server.manifest_refreshed_at],
    queryFn: () => unwrap(api.GET("/api/v1/mcp/servers/{id}/tools", { params: { path: { id: server.id }, query: { org_id: orgId } } })),
  });
  return (
    <>
      <ErrorNote error={tools.error} />
      {tools.isLoading && <Loading />}
      {tools.data && !tools.data.tools.length && <p className="muted">The server lists no tools.</p>}
      <ul className="tool-list" aria-label={`Tools of ${server.name}`}>
        {tools.data?.tools.map((t) => (
          <li key={t.name} data-tool={t.name}>
            <strong><code>{t.name}</code></strong> <span className="muted">{t.description}</span>
            <details>
              <summary>Input schema</summary>
              <pre className="schema">{JSON.stringify(t.input_schema, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ul>
    </>
  );
}

function ServerCard({ orgId, server }: { orgId: string; server: McpServer }) {
  const qc = useQueryClient();
  const [showTools, setShowTools] = useState(false);
  const [waiting, setWaiting] = useState(false);
  const refresh = () => void qc.invalidateQueries({ queryKey: ["mcp-servers", orgId] });
  const authorize = useMutation({
    mutationFn: async () => {
      const start = async () => (await unwrap(api.POST("/api/v1/mcp/servers/{id}/oauth/start", { params: { path: { id: server.id }, query: { org_id: orgId } } }))).authorization_url;
      setWaiting(true);
      // While the popup is open, the registration's status is re-read every second (it turns ready on its own).
      const poll = setInterval(refresh, 1000);
      try {
        return await authorizeInPopup(start);
      } finally {
        clearInterval(poll);
        setWaiting(false);
        refresh();
      }
    },
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/v1/mcp/servers/{id}", { params: { path: { id: server.id }, query: { org_id: orgId } } })),
    onSuccess: refresh,
  });
  const st = statusInWords(server);
  return (
    <li className="card" data-server={server.name}>
      <div className="card-head">
        <h3>{server.name} <Badge tone={st.tone}>{st.label}</Badge></h3>
        <div className="row">
          {(server.status === "needs_auth" || server.auth === "oauth") && (
            <Button variant={server.status === "needs_auth" ? "primary" : "secondary"} busy={authorize.isPending} onClick={() => authorize.mutate()}>
              {server.status === "needs_auth" ? "Authorize" : "Authorize again"}
            </Button>
          )}
          {server.status === "ready" && <Button onClick={() => setShowTools(true)}>Tools ({server.tool_count})</Button>}
          <Button variant="ghost" busy={remove.isPending} onClick={() => confirmed(`Delete ${server.name}? It disappears from every chat and agent.`) && remove.mutate()}>Delete</Button>
        </div>
      </div>
      <p className="muted small"><code>{server.url}</code> · {server.auth === "oauth" ? "signs in by OAuth" : server.auth === "credentials" ? "bearer credential" : "no sign-in"}</p>
      <p className={server.status === "error" || server.status === "needs_auth" ? "bad" : ""} data-testid="server-status">{st.words}</p>
      {server.status !== "error" && server.last_error && <p className="bad small">Last error: {server.last_error}</p>}
      {waiting && <Notice>Finish the authorization in the window that opened; this page updates when it is done.</Notice>}
      <ErrorNote error={authorize.error ?? remove.error} />
      <Dialog open={showTools} title={`Tools of ${server.name}`} onClose={() => setShowTools(false)}>
        <Tools orgId={orgId} server={server} />
      </Dialog>
    </li>
  );
}

/** The organization's MCP servers: register, authorize, their status and tools, delete. */
export function McpServerList({ orgId }: { orgId: string }) {
  const servers = useMcpServers(orgId, true);
  const list = servers.data?.servers ?? [];
  return (
    <section aria-labelledby="servers-h">
      <h2 id="servers-h">MCP servers your chats and agents use</h2>
      <Register orgId={orgId} />
      <ErrorNote error={servers.error} />
      {servers.isLoading && <Loading />}
      {servers.data && !list.length && <Empty title="No MCP servers registered yet."><p>Register one above; enable it per chat in the playground or give it to an agent.</p></Empty>}
      <ul className="cards">
        {list.map((s) => <ServerCard key={s.id} orgId={orgId} server={s} />)}
      </ul>
    </section>
  );
}

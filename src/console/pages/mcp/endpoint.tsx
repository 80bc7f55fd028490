import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { Button, confirmed, CopyButton, Empty, ErrorNote, Loading, Pager, formatDate } from "../../ui/ui";
import { TableWrap } from "../agents/table-wrap";
import { useKnowledgeBases } from "../knowledge-bases";

const GRANTS_PAGE = 50;

/** The names of a grant's knowledge bases (their ids when the tenant's list is out of reach). */
function KbNames({ tenantId, ids }: { tenantId: string; ids: string[] }) {
  const kbs = useKnowledgeBases(tenantId);
  return <>{ids.map((id) => kbs.data?.knowledge_bases.find((k) => k.id === id)?.name ?? id).join(", ")}</>;
}

/** How each client connects to the knowledge-base MCP endpoint (by OAuth: the URL is enough). */
function clients(url: string): { id: string; name: string; how: string; config: string }[] {
  return [
    {
      id: "claude",
      name: "Claude",
      how: "Claude (web and desktop): Settings → Connectors → Add custom connector, paste the URL, then allow the knowledge bases on the consent page. Claude Code: run this command.",
      config: `claude mcp add --transport http knowledge-base ${url}`,
    },
    {
      id: "cursor",
      name: "Cursor",
      how: "Add this to ~/.cursor/mcp.json (or .cursor/mcp.json in a project); Cursor signs in by OAuth. With an API key instead, add \"headers\": {\"Authorization\": \"Bearer kbk_…\"}.",
      config: JSON.stringify({ mcpServers: { "knowledge-base": { url } } }, null, 2),
    },
    {
      id: "inspector",
      name: "MCP Inspector",
      how: "Start the Inspector, choose the Streamable HTTP transport, paste the URL and connect (OAuth), or put an API key in Authentication as a Bearer token.",
      config: `npx @modelcontextprotocol/inspector\n# Transport: Streamable HTTP   URL: ${url}`,
    },
  ];
}

function ClientConfig() {
  const url = `${window.location.origin}/api/v1/mcp`;
  const list = clients(url);
  const [pick, setPick] = useState(list[0].id);
  const c = list.find((x) => x.id === pick) ?? list[0];
  return (
    <section className="card" aria-labelledby="endpoint-h">
      <h2 id="endpoint-h">This service as an MCP server</h2>
      <p>
        MCP clients search and ask your knowledge bases at <code data-testid="mcp-url">{url}</code> (tools <code>list_knowledge_bases</code>, <code>search</code>, <code>ask</code>). They sign in by OAuth: you pick the knowledge bases of one tenant on
        a consent page. An API key with <code>query:rag</code> works too.
      </p>
      <div className="tabs" role="tablist" aria-label="MCP client">
        {list.map((x) => (
          <button key={x.id} type="button" role="tab" id={`client-${x.id}`} aria-selected={x.id === pick} aria-controls="client-panel" className="btn btn-ghost" onClick={() => setPick(x.id)}>
            {x.name}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="client-panel" aria-labelledby={`client-${c.id}`}>
        <p>{c.how}</p>
        <pre className="config-snippet" data-testid="client-config">{c.config}</pre>
        <CopyButton text={c.config} label={`Copy the ${c.name} configuration`} />
      </div>
    </section>
  );
}

/** The OAuth clients that were granted access (yours; an owner sees the organization's), revocable. */
function Grants({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const [offset, setOffset] = useState(0);
  const grants = useQuery({
    queryKey: ["mcp-grants", orgId, offset],
    queryFn: () => unwrap(api.GET("/api/v1/mcp/oauth/grants", { params: { query: { org_id: orgId, limit: GRANTS_PAGE, offset } } })),
  });
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE("/api/v1/mcp/oauth/grants/{id}", { params: { path: { id }, query: { org_id: orgId } } })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ["mcp-grants", orgId] }),
  });
  const list = grants.data?.grants ?? [];
  return (
    <section className="card" aria-labelledby="grants-h">
      <h2 id="grants-h">Connected MCP clients</h2>
      <ErrorNote error={grants.error ?? revoke.error} />
      {grants.isLoading && <Loading />}
      {grants.data && !list.length && <Empty title="No client connected by OAuth yet."><p>Clients appear here once someone allows them on the consent page.</p></Empty>}
      {!!list.length && (
        <TableWrap label="Connected MCP clients">
          <table className="table">
            <thead>
              <tr><th scope="col">Client</th><th scope="col">Tokens go to</th><th scope="col">Knowledge bases</th><th scope="col">Allowed</th><th scope="col">Lapses</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
            </thead>
            <tbody>
              {list.map((g) => (
                <tr key={g.id}>
                  <td>{g.client_name} <span className="muted small">(as it named itself)</span></td>
                  <td><code>{g.redirect_host}</code></td>
                  <td><KbNames tenantId={g.tenant_id} ids={g.knowledge_base_ids} /></td>
                  <td>{formatDate(g.created_at)}</td>
                  <td>{formatDate(g.expires_at)}</td>
                  <td><Button variant="ghost" busy={revoke.isPending && revoke.variables === g.id} onClick={() => confirmed(`Revoke ${g.client_name}? Its tokens stop working at once.`) && revoke.mutate(g.id)}>Revoke</Button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {grants.data && <Pager total={grants.data.total} limit={GRANTS_PAGE} offset={offset} onChange={setOffset} what="clients" />}
    </section>
  );
}

export function KbMcpEndpoint({ orgId }: { orgId: string }) {
  return (
    <>
      <ClientConfig />
      <Grants orgId={orgId} />
    </>
  );
}

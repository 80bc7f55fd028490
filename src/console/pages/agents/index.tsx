import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { Link, navigate } from "../../router";
import { useScope } from "../../session";
import { Badge, Button, Empty, ErrorNote, Loading, PageHeader, Select, formatDate } from "../../ui/ui";
import { ScopeBar, useKnowledgeBases } from "../knowledge-bases";
import { bodyOf, ConfigFields, EMPTY_DRAFT } from "./config-form";
import { useAgents } from "./hooks";
import "./agents.css";
import { TableWrap } from "./table-wrap";

function CreateAgent({ orgId, tenantId }: { orgId: string; tenantId: string }) {
  const qc = useQueryClient();
  const kbs = useKnowledgeBases(tenantId);
  const [kbId, setKbId] = useState("");
  const [draft, setDraft] = useState(EMPTY_DRAFT);
  const kb = kbId || kbs.data?.knowledge_bases[0]?.id || "";
  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/agents", { body: { tenant_id: tenantId, knowledge_base_id: kb, ...bodyOf(draft) } })),
    onSuccess: (a) => {
      void qc.invalidateQueries({ queryKey: ["agents", tenantId] });
      navigate(`/o/${orgId}/agents/${a.id}`);
    },
  });
  return (
    <details className="card">
      <summary>
        <h2 className="inline">Create an agent</h2>
      </summary>
      <form className="form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
        <Select label="Knowledge base" value={kb} onChange={(e) => setKbId(e.target.value)} options={(kbs.data?.knowledge_bases ?? []).map((k) => ({ value: k.id, label: k.name }))} hint="The agent answers from it; fixed at creation." />
        <ConfigFields orgId={orgId} tenantId={tenantId} kbId={kb} draft={draft} set={setDraft} />
        {kbs.data && !kbs.data.knowledge_bases.length && <p className="muted">An agent answers from a knowledge base: create one in this tenant first.</p>}
        <ErrorNote error={create.error ?? kbs.error} />
        <Button type="submit" variant="primary" busy={create.isPending} disabled={!kb}>
          Create agent
        </Button>
      </form>
    </details>
  );
}

/** The agents of a tenant: their version, mode and schedule; a form to create one. */
export function Agents({ orgId }: { orgId: string }) {
  const scope = useScope(orgId);
  const [status, setStatus] = useState<"active" | "archived">("active");
  const agents = useAgents(scope.tenantId, status);
  const list = agents.data?.agents ?? [];
  return (
    <>
      <PageHeader title="Agents" />
      <ScopeBar scope={scope} />
      {scope.tenantId && <CreateAgent orgId={orgId} tenantId={scope.tenantId} />}
      <div className="scope-bar">
        <Select label="Show" value={status} onChange={(e) => setStatus(e.target.value as "active" | "archived")} options={[{ value: "active", label: "Active agents" }, { value: "archived", label: "Archived agents" }]} />
      </div>
      <ErrorNote error={agents.error ?? scope.error} />
      {agents.isLoading && <Loading />}
      {agents.data && !list.length && (
        <Empty title={status === "active" ? "No agents in this tenant yet." : "No archived agents."}>
          {status === "active" && <p>Create one above: a goal, a model and the tools it may use; run it now or on a schedule.</p>}
        </Empty>
      )}
      {!!list.length && (
        <TableWrap label="Agents">
          <table className="table stack">
            <thead>
              <tr><th scope="col">Agent</th><th scope="col">Version</th><th scope="col">Mode</th><th scope="col">Schedule</th><th scope="col">Updated</th></tr>
            </thead>
            <tbody>
              {list.map((a) => (
                <tr key={a.id}>
                  <td data-label="Agent"><Link to={`/o/${orgId}/agents/${a.id}`}>{a.name}</Link>{a.description && <div className="muted small">{a.description}</div>}</td>
                  <td data-label="Version">v{a.agentVersion}</td>
                  <td data-label="Mode">{a.agent_mode}</td>
                  <td data-label="Schedule">
                    {a.schedule ? (
                      <>
                        <code>{a.schedule.cron}</code> {a.schedule.timezone} {a.schedule.enabled ? <Badge tone="good">on</Badge> : <Badge>off</Badge>}
                        {a.schedule.enabled && a.schedule.next_run_at && <div className="muted small">next {formatDate(a.schedule.next_run_at)}</div>}
                      </>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </td>
                  <td data-label="Updated">{formatDate(a.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </>
  );
}

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, unwrap } from "../../api/client";
import { Link, useLocation } from "../../router";
import { Badge, Button, confirmed, CopyButton, ErrorNote, Loading, Notice, PageHeader } from "../../ui/ui";
import { changedFields, ConfigFields, draftOf, type ConfigDraft } from "./config-form";
import { useAgent, type Agent } from "./hooks";
import { RunNow, Runs } from "./runs";
import { ScheduleEditor } from "./schedule";
import { Versions } from "./versions";
import "./agents.css";

const TABS = [
  { id: "runs", label: "Run" },
  { id: "configuration", label: "Configuration" },
  { id: "versions", label: "Versions" },
  { id: "schedule", label: "Schedule" },
] as const;
type Tab = (typeof TABS)[number]["id"];

/** Publishes a new version from the edited configuration. */
function Deploy({ orgId, agent }: { orgId: string; agent: Agent }) {
  const qc = useQueryClient();
  const [draft, setDraft] = useState<ConfigDraft>(() => draftOf(agent));
  useEffect(() => setDraft(draftOf(agent)), [agent]);
  const deploy = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/agents/{id}/deploy", { params: { path: { id: agent.id } }, body: changedFields(draftOf(agent), draft) })),
    onSuccess: (a) => {
      qc.setQueryData(["agent", agent.id], a);
      void qc.invalidateQueries({ queryKey: ["agent-versions", agent.id] });
      void qc.invalidateQueries({ queryKey: ["agents", agent.tenant_id] });
    },
  });
  return (
    <form className="card form" onSubmit={(e) => (e.preventDefault(), deploy.mutate())}>
      <h2>Configuration of version {agent.agentVersion}</h2>
      <p className="muted">Deploying publishes version {agent.agentVersion + 1}; runs in flight keep the version they started with.</p>
      <ConfigFields orgId={orgId} tenantId={agent.tenant_id} kbId={agent.knowledge_base_id} selfId={agent.id} draft={draft} set={setDraft} />
      <ErrorNote error={deploy.error} />
      {deploy.isSuccess && <Notice>Deployed version {deploy.data.agentVersion}.</Notice>}
      <Button type="submit" variant="primary" busy={deploy.isPending} disabled={agent.status === "archived"}>
        Deploy version {agent.agentVersion + 1}
      </Button>
    </form>
  );
}

/** Where other A2A agents find this one (its card is public; calls take an API key with query:rag). */
function A2aCard({ agent }: { agent: Agent }) {
  const url = `${window.location.origin}/api/v1/agents/${agent.id}/a2a/.well-known/agent-card.json`;
  return (
    <section className="card" aria-labelledby="a2a-h">
      <h2 id="a2a-h">Call it over A2A</h2>
      <p>Other agents that speak A2A find this one by its card; each task they send is a run, listed under Run.</p>
      <p className="row">
        <code data-testid="agent-card-url">{url}</code> <CopyButton text={url} label="Copy the card URL" />
      </p>
    </section>
  );
}

/** One agent: run it now and watch its runs, edit and deploy, compare versions, schedule it. */
export function AgentDetail({ orgId, agentId }: { orgId: string; agentId: string }) {
  const qc = useQueryClient();
  const agent = useAgent(agentId);
  const { path, search } = useLocation();
  const tab = (TABS.find((t) => t.id === search.get("tab"))?.id ?? "runs") as Tab;
  const archive = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/v1/agents/{id}", { params: { path: { id: agentId } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ["agents"] });
      void qc.invalidateQueries({ queryKey: ["agent", agentId] });
    },
  });
  const a = agent.data;
  return (
    <>
      <p className="crumbs">
        <Link to={`/o/${orgId}/agents`}>Agents</Link> /
      </p>
      <PageHeader title={a ? a.name : "Agent"}>
        {a && (
          <>
            <Badge>version {a.agentVersion}</Badge>
            {a.status === "archived" ? <Badge tone="bad">archived</Badge> : (
              <Button variant="ghost" busy={archive.isPending} onClick={() => confirmed(`Archive ${a.name}? Its schedule stops; its runs stay readable.`) && archive.mutate()}>
                Archive
              </Button>
            )}
          </>
        )}
      </PageHeader>
      <ErrorNote error={agent.error ?? archive.error} />
      {agent.isLoading && <Loading />}
      <nav className="tabs" aria-label="Agent">
        {TABS.map((t) => (
          <Link key={t.id} to={`${path}?tab=${t.id}`} aria-current={tab === t.id ? "page" : undefined}>
            {t.label}
          </Link>
        ))}
      </nav>
      {a && tab === "runs" && (
        <>
          <RunNow agent={a} />
          <Runs orgId={orgId} agent={a} />
        </>
      )}
      {a && tab === "configuration" && (
        <>
          <Deploy orgId={orgId} agent={a} />
          <A2aCard agent={a} />
        </>
      )}
      {a && tab === "versions" && <Versions agent={a} />}
      {a && tab === "schedule" && <ScheduleEditor agent={a} />}
    </>
  );
}

import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api, unwrap } from "../../api/client";
import { ErrorNote, Loading, Select, formatDate } from "../../ui/ui";
import type { Agent, AgentVersion } from "./hooks";
import { configText, diffLines } from "./line-diff";
import { TableWrap } from "./table-wrap";

function Diff({ from, to }: { from: AgentVersion; to: AgentVersion }) {
  const lines = useMemo(() => diffLines(configText(from.config), configText(to.config)), [from, to]);
  const changed = lines.filter((l) => l.kind !== "same").length;
  return (
    <>
      <p className="muted" role="status">
        {changed ? `${changed} changed lines between version ${from.agentVersion} and version ${to.agentVersion}.` : `Versions ${from.agentVersion} and ${to.agentVersion} have the same configuration.`}
      </p>
      <pre className="diff" data-testid="version-diff" aria-label={`Changes between version ${from.agentVersion} and version ${to.agentVersion}`} tabIndex={0}>
        {lines.map((l, i) => (
          <div key={i} className={`diff-${l.kind}`}>
            <span aria-hidden="true">{l.kind === "added" ? "+ " : l.kind === "removed" ? "- " : "  "}</span>
            <span className="sr-only">{l.kind === "added" ? "added: " : l.kind === "removed" ? "removed: " : ""}</span>
            {l.text}
          </div>
        ))}
      </pre>
    </>
  );
}

/** Every published version, and the differences between any two. */
export function Versions({ agent }: { agent: Agent }) {
  const versions = useQuery({
    queryKey: ["agent-versions", agent.id, agent.agentVersion],
    queryFn: () => unwrap(api.GET("/api/v1/agents/{id}/versions", { params: { path: { id: agent.id } } })),
  });
  const list = versions.data?.versions ?? [];
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const toV = list.find((v) => v.agentVersion === to) ?? list.at(-1);
  const fromV = list.find((v) => v.agentVersion === from) ?? list.at(-2) ?? list.at(-1);
  const options = list.map((v) => ({ value: String(v.agentVersion), label: `Version ${v.agentVersion} (${formatDate(v.created_at)})` }));
  return (
    <section className="card" aria-labelledby="versions-h">
      <h2 id="versions-h">Versions</h2>
      <ErrorNote error={versions.error} />
      {versions.isLoading && <Loading />}
      <TableWrap label="Versions">
        <table className="table">
          <thead>
            <tr><th scope="col">Version</th><th scope="col">Published</th><th scope="col">Model</th><th scope="col">Mode</th><th scope="col">Schedule</th></tr>
          </thead>
          <tbody>
            {[...list].reverse().map((v) => (
              <tr key={v.agentVersion}>
                <td>v{v.agentVersion}{v.agentVersion === agent.agentVersion && <span className="muted small"> (current)</span>}</td>
                <td>{formatDate(v.created_at)}</td>
                <td>{v.config.model}</td>
                <td>{v.config.agent_mode}</td>
                <td>{v.config.schedule ? <code>{v.config.schedule.cron}</code> : <span className="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {fromV && toV && (
        <>
          <h3>Compare</h3>
          <div className="inline-form">
            <Select label="From version" value={String(fromV.agentVersion)} onChange={(e) => setFrom(Number(e.target.value))} options={options} />
            <Select label="To version" value={String(toV.agentVersion)} onChange={(e) => setTo(Number(e.target.value))} options={options} />
          </div>
          <Diff from={fromV} to={toV} />
        </>
      )}
    </section>
  );
}

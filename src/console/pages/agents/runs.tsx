import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, unwrap } from "../../api/client";
import { Link } from "../../router";
import { Badge, Button, Empty, ErrorNote, Loading, Pager, Select, TextArea, formatDate } from "../../ui/ui";
import { TurnView } from "../playground/answer";
import { applyEvent, readEvents, type Turn } from "../playground/stream";
import { inFlight, RUN_TONE, type Agent, type AgentRun } from "./hooks";
import { TableWrap } from "./table-wrap";

const RUNS_PAGE = 20;

function useStopRun(agentId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (runId: string) => unwrap(api.POST("/api/v1/agents/{id}/runs/{runId}/stop", { params: { path: { id: agentId, runId } } })),
    onSettled: () => void qc.invalidateQueries({ queryKey: ["agent-runs", agentId] }),
  });
}

/** Starts a run and streams its answer into the page; the run can be stopped while it streams. */
export function RunNow({ agent }: { agent: Agent }) {
  const qc = useQueryClient();
  const [task, setTask] = useState(agent.goal);
  const [turn, setTurn] = useState<Turn | null>(null);
  const [runId, setRunId] = useState<string | null>(null);
  const [streaming, setStreaming] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const stop = useStopRun(agent.id);
  useEffect(() => () => abort.current?.abort(), []);
  const run = async () => {
    const blank: Turn = { id: `run-${Date.now()}`, role: "assistant", content: "", sources: [], steps: [], status: "streaming" };
    setTurn(blank);
    setRunId(null);
    setStreaming(true);
    abort.current = new AbortController();
    const update = (f: (t: Turn) => Turn) => setTurn((t) => (t ? f(t) : t));
    try {
      const { data, error, response } = await api.POST("/api/v1/agents/{id}/messages/stream", { params: { path: { id: agent.id } }, body: { content: task }, parseAs: "stream", signal: abort.current.signal });
      if (!response.ok || !data) {
        const message = (error as { error?: { message?: string } } | undefined)?.error?.message ?? `The run was refused (HTTP ${response.status}).`;
        update((t) => ({ ...t, status: "error", error: message }));
        return;
      }
      setRunId(response.headers.get("X-Run-Id"));
      void qc.invalidateQueries({ queryKey: ["agent-runs", agent.id] });
      await readEvents(data, (e) => update((t) => applyEvent(t, e)));
      update((t) => (t.status === "streaming" ? { ...t, status: "partial" } : t));
    } catch (e) {
      const stopped = (e as Error).name === "AbortError";
      update((t) => (stopped ? { ...t, status: t.status === "streaming" ? "partial" : t.status } : { ...t, status: "error", error: (e as Error).message }));
    } finally {
      setStreaming(false);
      void qc.invalidateQueries({ queryKey: ["agent-runs", agent.id] });
    }
  };
  return (
    <section className="card" aria-labelledby="run-now-h">
      <h2 id="run-now-h">Run now</h2>
      <form className="form" onSubmit={(e) => (e.preventDefault(), void run())}>
        <TextArea label="Task" value={task} onChange={(e) => setTask(e.target.value)} required hint={`Runs version ${agent.agentVersion} in a new chat of this agent.`} />
        <div className="row">
          {streaming ? (
            <Button variant="danger" onClick={() => (runId ? stop.mutate(runId) : abort.current?.abort())} busy={stop.isPending}>Stop the run</Button>
          ) : (
            <Button type="submit" variant="primary" disabled={!task.trim() || agent.status === "archived"}>Run now</Button>
          )}
          {runId && <span className="muted small">Run <code>{runId}</code></span>}
        </div>
      </form>
      <ErrorNote error={stop.error} />
      {turn && (
        <ol className="turns" aria-live="polite" aria-busy={streaming} aria-label="The run's answer">
          <TurnView turn={turn} />
        </ol>
      )}
    </section>
  );
}

function duration(r: AgentRun): string {
  if (!r.started_at) return "—";
  const ms = new Date(r.ended_at ?? Date.now()).getTime() - new Date(r.started_at).getTime();
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function RunRow({ run, chatHref, onStop, stopping }: { run: AgentRun; chatHref: string | null; onStop: () => void; stopping: boolean }) {
  return (
    <tr data-run={run.id} data-status={run.status}>
      <td data-label="Status"><Badge tone={RUN_TONE[run.status]}>{run.status}</Badge></td>
      <td data-label="Trigger">{run.trigger}{run.scheduled_for && <div className="muted small">for {formatDate(run.scheduled_for)}</div>}</td>
      <td data-label="Version">v{run.agentVersion}</td>
      <td data-label="Started">{formatDate(run.started_at ?? run.created_at)}</td>
      <td data-label="Took">{duration(run)}</td>
      <td data-label="Usage">{run.usage ? `${run.usage.total_tokens} tokens · ${run.usage.credits} credits` : "—"}</td>
      <td data-label="Output" className="wrap run-output">
        <div>
        {run.error && <p className="bad">{run.error.message}</p>}
        {run.output ? (
          <details>
            <summary>{run.output.slice(0, 80)}{run.output.length > 80 ? "…" : ""}</summary>
            <p className="pre-wrap">{run.output}</p>
          </details>
        ) : !run.error && <span className="muted">{inFlight(run) ? "working…" : "no output"}</span>}
        {chatHref && <p className="small"><Link to={chatHref}>Open its chat</Link></p>}
        </div>
      </td>
      <td data-label="">{inFlight(run) && <Button variant="ghost" onClick={onStop} busy={stopping}>Stop</Button>}</td>
    </tr>
  );
}

/** The agent's runs, newest first: status, output and usage, refreshed while any is in flight. */
export function Runs({ orgId, agent }: { orgId: string; agent: Agent }) {
  const [offset, setOffset] = useState(0);
  const [status, setStatus] = useState<AgentRun["status"] | "">("");
  const stop = useStopRun(agent.id);
  const runs = useQuery({
    queryKey: ["agent-runs", agent.id, offset, status],
    // Another page or filter keeps the rows on screen until its own arrive.
    placeholderData: keepPreviousData,
    queryFn: () => unwrap(api.GET("/api/v1/agents/{id}/runs", { params: { path: { id: agent.id }, query: { limit: RUNS_PAGE, offset, status: status || undefined } } })),
    // Live: every second while a run may change, otherwise every 10 s (scheduled runs start on their own).
    refetchInterval: (q) => (q.state.data?.runs.some(inFlight) ? 1000 : 10_000),
  });
  const list = runs.data?.runs ?? [];
  return (
    <section className="card" aria-labelledby="runs-h">
      <div className="card-head">
        <h2 id="runs-h">Runs</h2>
        <Select
          label="Status"
          value={status}
          onChange={(e) => (setStatus(e.target.value as AgentRun["status"] | ""), setOffset(0))}
          options={[{ value: "", label: "All runs" }, ...(["queued", "running", "completed", "failed", "cancelled"] as const).map((v) => ({ value: v, label: v }))]}
        />
      </div>
      <ErrorNote error={runs.error ?? stop.error} />
      {runs.isLoading && <Loading />}
      {runs.data && !list.length && (status ? <p className="muted">No {status} runs.</p> : <Empty title="No runs yet."><p>Run the agent now, or give it a schedule.</p></Empty>)}
      {!!list.length && (
        <TableWrap label="Runs">
          <table className="table stack">
            <thead>
              <tr><th scope="col">Status</th><th scope="col">Trigger</th><th scope="col">Version</th><th scope="col">Started</th><th scope="col">Took</th><th scope="col">Usage</th><th scope="col">Output</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
            </thead>
            <tbody>
              {list.map((r) => <RunRow key={r.id} run={r} chatHref={r.chat_id ? `/o/${orgId}/kb/${agent.knowledge_base_id}/playground?chat=${r.chat_id}` : null} onStop={() => stop.mutate(r.id)} stopping={stop.isPending && stop.variables === r.id} />)}
            </tbody>
          </table>
        </TableWrap>
      )}
      {runs.data && <Pager total={runs.data.total} limit={RUNS_PAGE} offset={offset} onChange={setOffset} what="runs" />}
    </section>
  );
}

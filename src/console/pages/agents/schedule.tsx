import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Cron } from "croner";
import { useEffect, useMemo, useState } from "react";
import { api, unwrap } from "../../api/client";
import { useMe } from "../../session";
import { Badge, Button, confirmed, Empty, ErrorNote, Field, Notice, Select, TextArea, formatDate } from "../../ui/ui";
import { RUN_TONE, type Agent } from "./hooks";
import { TableWrap } from "./table-wrap";

const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const ZONES: string[] = (() => {
  try {
    const all = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.("timeZone") ?? [];
    return Array.from(new Set(["UTC", BROWSER_ZONE, ...all]));
  } catch {
    return ["UTC", BROWSER_ZONE];
  }
})();

/**
 * The next occurrences of a schedule, computed as the Worker computes them (croner, 5-part mode, in the
 * schedule's IANA time zone: src/services/agents/schedule.ts); the reason in words when it is not valid.
 */
export function nextOccurrences(cron: string, timezone: string, n: number, after = new Date()): { dates: Date[]; error?: string } {
  const expr = cron.trim().replace(/\s+/g, " ");
  if (expr.split(" ").length !== 5) return { dates: [], error: "The schedule must be a 5-field cron expression (minute hour day-of-month month day-of-week)." };
  try {
    const dates = new Cron(expr, { timezone, paused: true, mode: "5-part" }).nextRuns(n, after);
    return dates.length ? { dates } : { dates, error: "This expression never fires." };
  } catch (e) {
    return { dates: [], error: `Invalid cron expression: ${(e as Error).message}` };
  }
}

const inZone = (d: Date, timeZone: string) =>
  d.toLocaleString(undefined, { timeZone, weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" });

function delay(scheduled: string | null, started: string | null): string {
  if (!scheduled || !started) return "—";
  const s = Math.max(0, (new Date(started).getTime() - new Date(scheduled).getTime()) / 1000);
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.round(s / 60)} min`;
}

/** The schedule's recent occurrences: when each was due, how late it started and how it ended. */
function RecentOccurrences({ agent }: { agent: Agent }) {
  const runs = useQuery({
    queryKey: ["agent-runs", agent.id, "schedule"],
    queryFn: () => unwrap(api.GET("/api/v1/agents/{id}/runs", { params: { path: { id: agent.id }, query: { limit: 100 } } })),
    refetchInterval: 10_000,
  });
  const list = (runs.data?.runs ?? []).filter((r) => r.trigger === "schedule").slice(0, 10);
  return (
    <section className="card" aria-labelledby="recent-h">
      <h2 id="recent-h">Recent occurrences</h2>
      <ErrorNote error={runs.error} />
      {runs.data && !list.length && <p className="muted">No scheduled run yet.</p>}
      {!!list.length && (
        <TableWrap label="Scheduled runs">
          <table className="table stack">
            <thead>
              <tr><th scope="col">Due</th><th scope="col">Started</th><th scope="col">Start delay</th><th scope="col">Outcome</th></tr>
            </thead>
            <tbody>
              {list.map((r) => (
                <tr key={r.id}>
                  <td data-label="Due">{formatDate(r.scheduled_for)}</td>
                  <td data-label="Started">{formatDate(r.started_at)}</td>
                  <td data-label="Start delay">{delay(r.scheduled_for, r.started_at)}</td>
                  <td data-label="Outcome"><Badge tone={RUN_TONE[r.status]}>{r.status}</Badge>{r.error && <span className="bad small"> {r.error.message}</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

/** Edits the schedule (a new version when saved), previewing the next five occurrences in the chosen zone. */
export function ScheduleEditor({ agent }: { agent: Agent }) {
  const qc = useQueryClient();
  const me = useMe();
  const s = agent.schedule;
  const [cron, setCron] = useState(s?.cron ?? "0 9 * * 1-5");
  const [timezone, setTimezone] = useState(s?.timezone ?? BROWSER_ZONE);
  const [message, setMessage] = useState(s?.message ?? "");
  const [enabled, setEnabled] = useState(s?.enabled ?? true);
  useEffect(() => {
    setCron(s?.cron ?? "0 9 * * 1-5");
    setTimezone(s?.timezone ?? BROWSER_ZONE);
    setMessage(s?.message ?? "");
    setEnabled(s?.enabled ?? true);
  }, [s]);
  const preview = useMemo(() => nextOccurrences(cron, timezone, 5), [cron, timezone]);
  const done = (a: Agent) => {
    qc.setQueryData(["agent", agent.id], a);
    void qc.invalidateQueries({ queryKey: ["agent-versions", agent.id] });
    void qc.invalidateQueries({ queryKey: ["agents", agent.tenant_id] });
  };
  const save = useMutation({
    mutationFn: (schedule: { cron: string; timezone: string; enabled: boolean; message: string | null } | null) =>
      unwrap(api.POST("/api/v1/agents/{id}/deploy", { params: { path: { id: agent.id } }, body: { schedule } })),
    onSuccess: done,
  });
  const toggle = useMutation({
    mutationFn: (on: boolean) => unwrap(api.PATCH("/api/v1/agents/{id}/schedule", { params: { path: { id: agent.id } }, body: { enabled: on } })),
    onSuccess: done,
  });
  return (
    <>
      {s ? (
        <section className="card" aria-labelledby="current-h">
          <h2 id="current-h">Current schedule</h2>
          <p>
            <code>{s.cron}</code> in {s.timezone} {s.enabled ? <Badge tone="good">on</Badge> : <Badge>off</Badge>}
            {s.enabled && s.next_run_at && <> · next run {formatDate(s.next_run_at)}</>}
          </p>
          {s.bound_identity && (
            <p className="muted small">
              Scheduled runs act as {s.bound_identity.id === me.data?.user.id ? "you (you set it last)" : <>the {s.bound_identity.type === "user" ? "member" : "API key"} who set it last (<code>{s.bound_identity.id}</code>)</>}; saving or switching it makes them act as you.
            </p>
          )}
          <div className="row">
            <Button onClick={() => toggle.mutate(!s.enabled)} busy={toggle.isPending}>{s.enabled ? "Turn the schedule off" : "Turn the schedule on"}</Button>
            <Button variant="ghost" busy={save.isPending} onClick={() => confirmed("Remove the schedule? This publishes a new version without one.") && save.mutate(null)}>Remove the schedule</Button>
          </div>
          <ErrorNote error={toggle.error} />
        </section>
      ) : (
        <Empty title="No schedule."><p>Set one below: the agent then runs on its own, as you.</p></Empty>
      )}
      <form className="card form" onSubmit={(e) => (e.preventDefault(), save.mutate({ cron, timezone, enabled, message: message.trim() || null }))}>
        <h2>{s ? "Change the schedule" : "Set a schedule"}</h2>
        <div className="inline-form">
          <Field label="Cron expression" value={cron} onChange={(e) => setCron(e.target.value)} required hint="minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5" />
          <Select label="Time zone" value={timezone} onChange={(e) => setTimezone(e.target.value)} options={ZONES.map((z) => ({ value: z, label: z }))} />
        </div>
        <TextArea label="Task of a scheduled run (optional)" value={message} onChange={(e) => setMessage(e.target.value)} hint="Empty: the agent's goal." />
        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
        </label>
        <div className="preview" aria-live="polite">
          <h3>Next five occurrences ({timezone})</h3>
          {preview.error ? (
            <p className="note note-error">{preview.error}</p>
          ) : (
            <ol data-testid="next-occurrences">
              {preview.dates.map((d) => <li key={d.getTime()}><time dateTime={d.toISOString()}>{inZone(d, timezone)}</time></li>)}
            </ol>
          )}
        </div>
        <ErrorNote error={save.error} />
        {save.isSuccess && <Notice>{save.data.schedule ? `Saved as version ${save.data.agentVersion}.` : `Schedule removed (version ${save.data.agentVersion}).`}</Notice>}
        <Button type="submit" variant="primary" busy={save.isPending} disabled={!!preview.error || agent.status === "archived"}>Save the schedule</Button>
      </form>
      <RecentOccurrences agent={agent} />
    </>
  );
}

import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api, unwrap } from "../../api/client";
import { Chart } from "../../ui/chart";
import { ErrorNote, Field, Loading, PageHeader, Pager, Select, formatDate } from "../../ui/ui";

const LIMIT = 50;
const DAYS = 14;
/** Usage grows as the service is used: the page refreshes on its own. */
const LIVE_MS = 15_000;

const day = (d: Date) => d.toISOString().slice(0, 10);

function lastDays(n: number): string[] {
  const today = new Date();
  return Array.from({ length: n }, (_, i) => day(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (n - 1 - i)))));
}

function Credits({ orgId }: { orgId: string }) {
  const billing = useQuery({ queryKey: ["billing", orgId], refetchInterval: LIVE_MS, queryFn: () => unwrap(api.GET("/api/v1/billing/organizations/{orgId}", { params: { path: { orgId } } })) });
  const b = billing.data;
  return (
    <section aria-labelledby="credits-heading">
      <h2 id="credits-heading">Credits</h2>
      <ErrorNote error={billing.error} />
      {billing.isLoading && <Loading />}
      {b && (
        <>
          <dl className="stats">
            <div><dt>Total</dt><dd>{b.total_credits}</dd></div>
            <div><dt>Given to tenants</dt><dd>{b.allocated_credits}</dd></div>
            <div><dt>Used</dt><dd>{b.used_credits}</dd></div>
            <div><dt>Available</dt><dd>{b.available_credits}</dd></div>
          </dl>
          <p className="muted small">Period {formatDate(b.period.start)} – {formatDate(b.period.end)} · {b.status}</p>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Credits per tenant">
            <table className="table">
              <caption className="sr-only">Credits per tenant</caption>
              <thead><tr><th scope="col">Tenant</th><th scope="col">Pool</th><th scope="col">Used</th><th scope="col">Available</th></tr></thead>
              <tbody>
                {b.tenants.map((t) => (
                  <tr key={t.tenant_id}><td>{t.name}</td><td>{t.credits_pool}</td><td>{t.credits_used}</td><td>{t.credits_available}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** Credits and answers per day for the last two weeks: one summary per day (the API's date filters). */
function OverTime({ orgId, tenantId, isApiKey }: { orgId: string; tenantId: string; isApiKey?: "true" | "false" }) {
  const days = useMemo(() => lastDays(DAYS), []);
  const series = useQuery({
    queryKey: ["usage-days", orgId, tenantId, isApiKey, days[0]],
    refetchInterval: LIVE_MS,
    queryFn: () =>
      Promise.all(
        days.map(async (d) => {
          const query = { start_date: d, end_date: d, is_api_key: isApiKey };
          const s = tenantId
            ? await unwrap(api.GET("/api/v1/billing/tenants/{tenantId}/usage/summary", { params: { path: { tenantId }, query } }))
            : await unwrap(api.GET("/api/v1/billing/organizations/{orgId}/usage/summary", { params: { path: { orgId }, query } }));
          return { day: d, credits: s.credits_used, answers: s.message_count, tokens: s.total_tokens };
        }),
      ),
  });
  const spec = useMemo(
    () =>
      series.data && {
        $schema: "https://vega.github.io/schema/vega-lite/v5.json",
        title: `Credits used per day, last ${DAYS} days`,
        data: { values: series.data },
        mark: { type: "bar", tooltip: true },
        encoding: { x: { field: "day", type: "ordinal", title: "Day (UTC)", axis: { labelAngle: -45 } }, y: { field: "credits", type: "quantitative", title: "Credits" } },
      },
    [series.data],
  );
  const total = series.data?.reduce((a, r) => a + r.answers, 0) ?? 0;
  return (
    <section aria-labelledby="time-heading">
      <h2 id="time-heading">Over time</h2>
      <ErrorNote error={series.error} />
      {series.isLoading && <Loading what="Adding up the days" />}
      {spec && <Chart spec={spec} />}
      {series.data && <p className="muted small">{total} metered answers in the last {DAYS} days.</p>}
    </section>
  );
}

/** Usage and billing: credits per tenant, usage over time as a chart, and the usage log with its filters. */
export default function Usage({ orgId }: { orgId: string }) {
  const billing = useQuery({ queryKey: ["billing", orgId], queryFn: () => unwrap(api.GET("/api/v1/billing/organizations/{orgId}", { params: { path: { orgId } } })) });
  const [tenantId, setTenantId] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [who, setWho] = useState("");
  const [offset, setOffset] = useState(0);
  const query = { start_date: from || undefined, end_date: to || undefined, is_api_key: who ? (who as "true" | "false") : undefined, limit: LIMIT, offset };
  const logs = useQuery({
    queryKey: ["usage-logs", orgId, tenantId, query],
    refetchInterval: LIVE_MS,
    queryFn: () =>
      tenantId
        ? unwrap(api.GET("/api/v1/billing/tenants/{tenantId}/usage/logs", { params: { path: { tenantId }, query } }))
        : unwrap(api.GET("/api/v1/billing/organizations/{orgId}/usage/logs", { params: { path: { orgId }, query: { ...query } } })),
  });
  const reset = <T,>(set: (v: T) => void) => (v: T) => (set(v), setOffset(0));
  return (
    <>
      <PageHeader title="Usage and billing" />
      <Credits orgId={orgId} />
      <div className="inline-form" role="group" aria-label="Filters">
        <Select label="Tenant" value={tenantId} onChange={(e) => reset(setTenantId)(e.target.value)} options={[{ value: "", label: "All tenants" }, ...(billing.data?.tenants ?? []).map((t) => ({ value: t.tenant_id, label: t.name }))]} />
        <Field label="From (UTC)" type="date" value={from} onChange={(e) => reset(setFrom)(e.target.value)} />
        <Field label="To (UTC)" type="date" value={to} onChange={(e) => reset(setTo)(e.target.value)} />
        <Select label="Made with" value={who} onChange={(e) => reset(setWho)(e.target.value)} options={[{ value: "", label: "Keys and sessions" }, { value: "true", label: "API keys and embed tokens" }, { value: "false", label: "Signed-in sessions" }]} />
      </div>
      <OverTime orgId={orgId} tenantId={tenantId} isApiKey={query.is_api_key} />
      <h2>Usage log</h2>
      <ErrorNote error={logs.error} />
      {logs.isLoading && <Loading />}
      {logs.data && (
        <>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Usage log">
            <table className="table">
              <caption className="sr-only">Usage log</caption>
              <thead><tr><th scope="col">When</th><th scope="col">Operation</th><th scope="col">Model</th><th scope="col">Tokens (in / out)</th><th scope="col">Credits</th><th scope="col">By</th></tr></thead>
              <tbody>
                {logs.data.logs.map((l) => (
                  <tr key={l.id}>
                    <td className="nowrap">{formatDate(l.created_at)}</td>
                    <td>{l.operation}</td>
                    <td><code>{l.model}</code></td>
                    <td>{l.input_tokens} / {l.output_tokens}</td>
                    <td>{l.credits_used}</td>
                    <td>{l.is_api_key ? <code>{l.api_key_id}</code> : "session"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {!logs.data.logs.length && <p className="muted">Nothing was metered with these filters.</p>}
          <Pager total={logs.data.total} limit={LIMIT} offset={offset} onChange={setOffset} what="entries" />
        </>
      )}
    </>
  );
}

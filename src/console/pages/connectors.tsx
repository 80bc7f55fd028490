import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { navigate, useLocation } from "../router";
import { Badge, Button, confirmed, Empty, ErrorNote, Loading, Notice, PageHeader, Pager, formatDate } from "../ui/ui";
import "./agents/agents.css";

const PAGE = 50;
type Status = Schemas["ConnectorStatus"];

const REASONS: Record<string, string> = {
  expired: "the authorization expired",
  revoked: "access was revoked at the app",
  scope_missing: "the app did not grant every permission needed",
};

/** What the provider's return to this page said (status=connected|error&slug=&error=). */
function Outcome({ names }: { names: Record<string, string> }) {
  const { path, search } = useLocation();
  const status = search.get("status");
  if (!status) return null;
  const slug = names[search.get("slug") ?? ""] ?? search.get("slug") ?? "The app";
  const clear = () => navigate(path, { replace: true });
  return status === "connected" ? (
    <div className="row"><Notice>{slug} is connected.</Notice><Button variant="ghost" onClick={clear}>Dismiss</Button></div>
  ) : (
    <div className="row">
      <p className="note note-error" role="alert">{slug} was not connected: {search.get("error_description") ?? search.get("error") ?? "the provider refused"}.</p>
      <Button variant="ghost" onClick={clear}>Dismiss</Button>
    </div>
  );
}

function ConnectorCard({ orgId, c, status }: { orgId: string; c: Schemas["Connector"]; status?: Status }) {
  const qc = useQueryClient();
  const refresh = () => void qc.invalidateQueries({ queryKey: ["connector-status"] });
  const connect = useMutation({
    mutationFn: async () => {
      // The provider sends the browser back here (this page), with the outcome in the query.
      const back = `${window.location.origin}/console/o/${orgId}/connectors`;
      const r = await unwrap(api.POST("/api/v1/connectors/add", { body: { slug: c.slug, redirect_url: back } }));
      if (r.already_connected) return "already";
      window.location.assign(r.redirect_url);
      return "redirected";
    },
    onSuccess: refresh,
  });
  const disconnect = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/v1/connectors/{slug}", { params: { path: { slug: c.slug } } })),
    onSuccess: () => {
      refresh();
      // The outcome of an earlier connect no longer holds.
      navigate(`/o/${orgId}/connectors`, { replace: true });
    },
  });
  const connected = status?.status === "connected";
  return (
    <li className="card" data-connector={c.slug}>
      <div className="card-head">
        <div className="row">
          <img className="connector-logo" src={c.logo} alt="" />
          <h3>{c.name}</h3>
          {connected ? <Badge tone="good">connected</Badge> : status?.status === "disconnected" ? <Badge tone="bad">stopped working</Badge> : null}
        </div>
        {connected ? (
          <Button variant="ghost" busy={disconnect.isPending} onClick={() => confirmed(`Disconnect ${c.name}?`) && disconnect.mutate()}>Disconnect</Button>
        ) : (
          <Button variant="primary" busy={connect.isPending} disabled={!c.available} onClick={() => connect.mutate()}>{status?.status === "disconnected" ? "Connect again" : "Connect"}</Button>
        )}
      </div>
      <p className="muted">{c.description}</p>
      {connected && <p>Connected as <strong>{status?.account ?? "an unnamed account"}</strong> since {formatDate(status?.connected_at)}.</p>}
      {status?.status === "disconnected" && <p className="bad">Stopped working: {REASONS[status.reason ?? ""] ?? "connect it again"}.</p>}
      {!c.available && <p className="muted small">Not available yet: the service's OAuth client for {c.name} is not configured.</p>}
      {connect.data === "already" && <Notice>Already connected.</Notice>}
      <ErrorNote error={connect.error ?? disconnect.error} />
      <details>
        <summary>{c.tools.length} tools ({c.category})</summary>
        <ul>{c.tools.map((t) => <li key={t.name}><code>{t.name}</code> <span className="muted">{t.description}</span></li>)}</ul>
      </details>
    </li>
  );
}

/** The apps a person can connect (for the deep mode's tools), connected through the provider's OAuth flow. */
export function Connectors({ orgId }: { orgId: string }) {
  const [offset, setOffset] = useState(0);
  const catalog = useQuery({
    queryKey: ["connector-catalog", offset],
    queryFn: () => unwrap(api.GET("/api/v1/connectors/catalog", { params: { query: { limit: PAGE, offset } } })),
  });
  const slugs = catalog.data?.connectors.map((c) => c.slug) ?? [];
  const statuses = useQuery({
    queryKey: ["connector-status", slugs],
    enabled: slugs.length > 0,
    queryFn: () => unwrap(api.POST("/api/v1/connectors/status", { body: { slugs } })),
  });
  const list = catalog.data?.connectors ?? [];
  return (
    <>
      <PageHeader title="Connected apps" />
      <p className="muted">Apps you connect are yours: chats and agents in deep mode can use their tools as you.</p>
      <Outcome names={Object.fromEntries(list.map((c) => [c.slug, c.name]))} />
      <ErrorNote error={catalog.error ?? statuses.error} />
      {catalog.isLoading && <Loading />}
      {catalog.data && !list.length && <Empty title="No apps in the catalog." />}
      <ul className="cards grid">
        {list.map((c) => <ConnectorCard key={c.slug} orgId={orgId} c={c} status={statuses.data?.statuses.find((s) => s.slug === c.slug)} />)}
      </ul>
      {catalog.data && <Pager total={catalog.data.total} limit={PAGE} offset={offset} onChange={setOffset} what="apps" />}
    </>
  );
}

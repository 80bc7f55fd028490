import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { useScope } from "../session";
import { Badge, Button, confirmed, Dialog, Empty, ErrorNote, Field, Loading, PageHeader, Select, TextArea } from "../ui/ui";
import { useA2aAgents } from "./agents/hooks";
import { ScopeBar, useKnowledgeBases } from "./knowledge-bases";
import "./agents/agents.css";

type Header = { name: string; value: string };

const serialize = (headers: Header[]) => {
  const filled = headers.filter((h) => h.name.trim());
  return filled.length ? JSON.stringify(Object.fromEntries(filled.map((h) => [h.name.trim(), h.value]))) : null;
};

function parseHeaders(raw: string | null): Header[] {
  try {
    const o = raw && raw !== "[redacted]" ? (JSON.parse(raw) as Record<string, string>) : {};
    const rows = Object.entries(o).map(([name, value]) => ({ name, value: String(value) }));
    return rows.length ? rows : [{ name: "", value: "" }];
  } catch {
    return [{ name: "", value: "" }];
  }
}

/** Header rows (name and value), with a button for one more. */
function HeaderRows({ headers, set }: { headers: Header[]; set: (h: Header[]) => void }) {
  const setRow = (i: number, h: Header) => set(headers.map((x, j) => (j === i ? h : x)));
  return (
    <fieldset>
      <legend>Headers sent with every call (stored encrypted)</legend>
      {headers.map((h, i) => (
        <div key={i} className="inline-form">
          <Field label={`Header ${i + 1} name`} value={h.name} onChange={(e) => setRow(i, { ...h, name: e.target.value })} placeholder="Authorization" />
          <Field label={`Header ${i + 1} value`} type="password" autoComplete="off" value={h.value} onChange={(e) => setRow(i, { ...h, value: e.target.value })} />
        </div>
      ))}
      <Button onClick={() => set([...headers, { name: "", value: "" }])}>Add a header</Button>
    </fieldset>
  );
}

function Register({ kbId }: { kbId: string }) {
  const qc = useQueryClient();
  const [name, setName] = useState("");
  const [cardUrl, setCardUrl] = useState("");
  const [description, setDescription] = useState("");
  const [headers, setHeaders] = useState<Header[]>([{ name: "", value: "" }]);
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/v1/knowledge-bases/{id}/a2a-agents", {
          params: { path: { id: kbId } },
          body: { name, cardUrl, description: description || null, headers: serialize(headers) ?? undefined },
        }),
      ),
    onSuccess: () => {
      setName("");
      setCardUrl("");
      setDescription("");
      setHeaders([{ name: "", value: "" }]);
      void qc.invalidateQueries({ queryKey: ["a2a-agents", kbId] });
    },
  });
  return (
    <form className="card form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
      <h2>Register an external agent</h2>
      <div className="inline-form">
        <Field label="Agent name" required value={name} onChange={(e) => setName(e.target.value)} />
        <Field label="Card URL" required value={cardUrl} onChange={(e) => setCardUrl(e.target.value)} placeholder="https://agent.example.com" hint="A bare origin means its /.well-known/agent-card.json; the card is fetched now." />
      </div>
      <TextArea label="Description (optional)" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
      <HeaderRows headers={headers} set={setHeaders} />
      <ErrorNote error={create.error} />
      <Button type="submit" variant="primary" busy={create.isPending}>Register agent</Button>
    </form>
  );
}

/** Changes a registration: only the fields that changed are sent (a new card URL fetches the card again). */
function Edit({ kbId, a, onDone }: { kbId: string; a: Schemas["A2aAgent"]; onDone: () => void }) {
  const qc = useQueryClient();
  const [name, setName] = useState(a.name);
  const [cardUrl, setCardUrl] = useState(a.cardUrl);
  const [description, setDescription] = useState(a.description ?? "");
  const [headers, setHeaders] = useState<Header[]>(() => parseHeaders(a.headers));
  const redacted = a.headers === "[redacted]";
  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, unknown> = {};
      if (name !== a.name) body.name = name;
      if (cardUrl !== a.cardUrl) body.cardUrl = cardUrl;
      if (description !== (a.description ?? "")) body.description = description || null;
      const h = serialize(headers);
      if (!redacted && h !== (a.headers && a.headers !== "[redacted]" ? serialize(parseHeaders(a.headers)) : null)) body.headers = h;
      return unwrap(api.PATCH("/api/v1/knowledge-bases/{id}/a2a-agents/{agentId}", { params: { path: { id: kbId, agentId: a.id } }, body }));
    },
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ["a2a-agents", kbId] });
      onDone();
    },
  });
  return (
    <form className="form" onSubmit={(e) => (e.preventDefault(), save.mutate())}>
      <Field label="Agent name" required value={name} onChange={(e) => setName(e.target.value)} />
      <Field label="Card URL" required value={cardUrl} onChange={(e) => setCardUrl(e.target.value)} hint="A new URL fetches the card again." />
      <TextArea label="Description (optional)" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
      {redacted ? <p className="muted">Its headers are hidden from your role and stay as they are.</p> : <HeaderRows headers={headers} set={setHeaders} />}
      <ErrorNote error={save.error} />
      <Button type="submit" variant="primary" busy={save.isPending}>Save changes</Button>
    </form>
  );
}

function AgentCard({ kbId, a }: { kbId: string; a: Schemas["A2aAgent"] }) {
  const qc = useQueryClient();
  const [editing, setEditing] = useState(false);
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/v1/knowledge-bases/{id}/a2a-agents/{agentId}", { params: { path: { id: kbId, agentId: a.id } } })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ["a2a-agents", kbId] }),
  });
  const headerNames = (() => {
    try {
      return a.headers && a.headers !== "[redacted]" ? Object.keys(JSON.parse(a.headers) as object) : [];
    } catch {
      return [];
    }
  })();
  return (
    <li className="card" data-a2a={a.name}>
      <div className="card-head">
        <h3>{a.name} <Badge tone={a.status === "ready" ? "good" : "bad"}>{a.status}</Badge></h3>
        <div className="row">
          <Button onClick={() => setEditing(true)}>Edit</Button>
          <Button variant="ghost" busy={remove.isPending} onClick={() => confirmed(`Remove ${a.name}? Chats and agents naming it get an error from then on.`) && remove.mutate()}>Remove</Button>
        </div>
      </div>
      {a.description && <p>{a.description}</p>}
      {a.last_error && <p className="bad">Last call failed: {a.last_error}</p>}
      {a.card ? (
        <dl className="kv">
          <dt>Card</dt><dd>{a.card.name} — {a.card.description}</dd>
          <dt>Endpoint</dt><dd><code>{a.card.url}</code></dd>
          <dt>Version</dt><dd>{a.card.version} (A2A {a.card.protocol_version})</dd>
          <dt>Card URL</dt><dd><code>{a.cardUrl}</code></dd>
          <dt>Headers</dt><dd>{a.headers === "[redacted]" ? "set (hidden from your role)" : headerNames.length ? headerNames.join(", ") : "none"}</dd>
          <dt>Skills</dt>
          <dd>
            {a.card.skills.length ? (
              <ul>{a.card.skills.map((s) => <li key={s.id}><strong>{s.name}</strong> <span className="muted">{s.description}</span></li>)}</ul>
            ) : "none listed"}
          </dd>
        </dl>
      ) : (
        <p className="muted">No card fetched.</p>
      )}
      <ErrorNote error={remove.error} />
      <Dialog open={editing} title={`Edit ${a.name}`} onClose={() => setEditing(false)}>
        <Edit kbId={kbId} a={a} onDone={() => setEditing(false)} />
      </Dialog>
    </li>
  );
}

/** External A2A agents of a knowledge base: register by card URL (with headers), the fetched card, remove. */
export function A2aAgents({ orgId }: { orgId: string }) {
  const scope = useScope(orgId);
  const kbs = useKnowledgeBases(scope.tenantId);
  const [picked, setPicked] = useState("");
  const kbId = kbs.data?.knowledge_bases.find((k) => k.id === picked)?.id ?? kbs.data?.knowledge_bases[0]?.id;
  const agents = useA2aAgents(kbId);
  const list = agents.data?.a2a_agents ?? [];
  return (
    <>
      <PageHeader title="External agents" />
      <p className="muted">Agents elsewhere that speak A2A: chats in the playground and agents of a knowledge base can delegate to them.</p>
      <ScopeBar scope={scope} />
      {kbs.data && !kbs.data.knowledge_bases.length && <Empty title="No knowledge base in this tenant." />}
      {kbId && (
        <>
          <div className="scope-bar">
            <Select label="Knowledge base" value={kbId} onChange={(e) => setPicked(e.target.value)} options={(kbs.data?.knowledge_bases ?? []).map((k) => ({ value: k.id, label: k.name }))} />
          </div>
          <Register kbId={kbId} />
        </>
      )}
      <ErrorNote error={agents.error ?? kbs.error} />
      {agents.isLoading && <Loading />}
      {agents.data && !list.length && <Empty title="No external agents registered for this knowledge base." />}
      <ul className="cards">
        {list.map((a) => <AgentCard key={a.id} kbId={kbId!} a={a} />)}
      </ul>
    </>
  );
}

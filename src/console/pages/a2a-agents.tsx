import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { useScope } from "../session";
import { Badge, Button, confirmed, Empty, ErrorNote, Field, Loading, PageHeader, Select, TextArea } from "../ui/ui";
import { useA2aAgents } from "./agents/hooks";
import { ScopeBar, useKnowledgeBases } from "./knowledge-bases";
import "./agents/agents.css";

type Header = { name: string; value: string };

function Register({ kbId }: { kbId: string }) {
  const qc = useQueryClient();
  const [name, setName] = useState("");
  const [cardUrl, setCardUrl] = useState("");
  const [description, setDescription] = useState("");
  const [headers, setHeaders] = useState<Header[]>([{ name: "", value: "" }]);
  const filled = headers.filter((h) => h.name.trim());
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/v1/knowledge-bases/{id}/a2a-agents", {
          params: { path: { id: kbId } },
          body: { name, cardUrl, description: description || null, headers: filled.length ? JSON.stringify(Object.fromEntries(filled.map((h) => [h.name.trim(), h.value]))) : undefined },
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
  const setHeader = (i: number, h: Header) => setHeaders((cur) => cur.map((x, j) => (j === i ? h : x)));
  return (
    <form className="card form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
      <h2>Register an external agent</h2>
      <div className="inline-form">
        <Field label="Agent name" required value={name} onChange={(e) => setName(e.target.value)} />
        <Field label="Card URL" required value={cardUrl} onChange={(e) => setCardUrl(e.target.value)} placeholder="https://agent.example.com" hint="A bare origin means its /.well-known/agent-card.json; the card is fetched now." />
      </div>
      <TextArea label="Description (optional)" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
      <fieldset>
        <legend>Headers sent with every call (stored encrypted)</legend>
        {headers.map((h, i) => (
          <div key={i} className="inline-form">
            <Field label={`Header ${i + 1} name`} value={h.name} onChange={(e) => setHeader(i, { ...h, name: e.target.value })} placeholder="Authorization" />
            <Field label={`Header ${i + 1} value`} type="password" autoComplete="off" value={h.value} onChange={(e) => setHeader(i, { ...h, value: e.target.value })} />
          </div>
        ))}
        <Button onClick={() => setHeaders((cur) => [...cur, { name: "", value: "" }])}>Add a header</Button>
      </fieldset>
      <ErrorNote error={create.error} />
      <Button type="submit" variant="primary" busy={create.isPending}>Register agent</Button>
    </form>
  );
}

function AgentCard({ kbId, a }: { kbId: string; a: Schemas["A2aAgent"] }) {
  const qc = useQueryClient();
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
        <Button variant="ghost" busy={remove.isPending} onClick={() => confirmed(`Remove ${a.name}? Chats and agents naming it get an error from then on.`) && remove.mutate()}>Remove</Button>
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

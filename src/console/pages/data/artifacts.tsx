import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { Link, navigate } from "../../router";
import { Badge, Button, Dialog, Empty, ErrorNote, Field, Loading, Select, TextArea, formatDate } from "../../ui/ui";
import { KbHeader } from "../kb-header";
import { ArtifactDetail } from "./artifact-detail";

function NewArtifact({ orgId, kbId }: { orgId: string; kbId: string }) {
  const [f, setF] = useState({ type: "markdown" as "markdown" | "html", title: "", summary: "", content: "" });
  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/knowledge-bases/{id}/artifacts", { params: { path: { id: kbId } }, body: f })),
    onSuccess: (a) => navigate(`/o/${orgId}/kb/${kbId}/artifacts/${a.id}`),
  });
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  return (
    <form className="form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
      <Select label="Type" value={f.type} onChange={set("type")} options={[{ value: "markdown", label: "Markdown" }, { value: "html", label: "HTML" }]} />
      <Field label="Title" required value={f.title} onChange={set("title")} />
      <Field label="Summary" value={f.summary} onChange={set("summary")} />
      <TextArea label="Content" rows={10} required value={f.content} onChange={set("content")} />
      <ErrorNote error={create.error} />
      <Button type="submit" variant="primary" busy={create.isPending}>Create artifact</Button>
    </form>
  );
}

function ArtifactList({ orgId, kbId }: { orgId: string; kbId: string }) {
  const [query, setQuery] = useState("");
  const [status, setStatus] = useState<"active" | "archived" | "all">("active");
  const [creating, setCreating] = useState(false);
  const list = useQuery({
    queryKey: ["artifacts", kbId, query, status],
    // Chats and agents write artifacts too: the list refreshes on its own.
    refetchInterval: 15_000,
    queryFn: () => unwrap(api.GET("/api/v1/knowledge-bases/{id}/artifacts", { params: { path: { id: kbId }, query: { query: query || undefined, include_status: status, limit: 100 } } })),
  });
  const items = list.data?.artifacts ?? [];
  return (
    <>
      <div className="inline-form" role="search">
        <Field label="Search title, summary and content" value={query} maxLength={200} onChange={(e) => setQuery(e.target.value)} />
        <Select label="Show" value={status} onChange={(e) => setStatus(e.target.value as typeof status)} options={[{ value: "active", label: "Active" }, { value: "archived", label: "Archived" }, { value: "all", label: "All" }]} />
        <Button variant="primary" onClick={() => setCreating(true)}>New artifact</Button>
      </div>
      <ErrorNote error={list.error} />
      {list.isLoading && <Loading />}
      {list.data && !items.length && <Empty title="No artifacts."><p>Documents that chats and agents write (reports, pages) appear here; you can also write one.</p></Empty>}
      <ul className="cards grid">
        {items.map((a) => (
          <li key={a.id} className="card">
            <h3><Link to={`/o/${orgId}/kb/${kbId}/artifacts/${a.id}`}>{a.title}</Link></h3>
            <p className="row"><Badge>{a.type}</Badge> <Badge>revision {a.revision}</Badge> {a.status === "archived" && <Badge tone="bad">archived</Badge>} {a.published && <Badge tone="good">published ({a.published.visibility})</Badge>}</p>
            <p className="muted">{a.summary || "No summary."}</p>
            <p className="muted small">Updated {formatDate(a.updated_at)}</p>
          </li>
        ))}
      </ul>
      <Dialog open={creating} title="New artifact" onClose={() => setCreating(false)}>
        <NewArtifact orgId={orgId} kbId={kbId} />
      </Dialog>
    </>
  );
}

/** A knowledge base's artifacts: the list, or one artifact (edit, revisions side by side, publish). */
export default function Artifacts({ orgId, kbId, artifactId }: { orgId: string; kbId: string; artifactId?: string }) {
  const qc = useQueryClient();
  return (
    <>
      <KbHeader orgId={orgId} kbId={kbId} page="Artifacts" />
      {artifactId ? (
        <ArtifactDetail orgId={orgId} kbId={kbId} artifactId={artifactId} onChanged={() => void qc.invalidateQueries({ queryKey: ["artifacts", kbId] })} />
      ) : (
        <ArtifactList orgId={orgId} kbId={kbId} />
      )}
    </>
  );
}

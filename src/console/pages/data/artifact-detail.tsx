import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { Link } from "../../router";
import { Badge, Button, confirmed, ErrorNote, Field, Loading, Notice, Select, TextArea, formatDate } from "../../ui/ui";

type Artifact = Schemas["Artifact"];
type Revision = Schemas["ArtifactRevision"];

function Editor({ artifact, onSaved }: { artifact: Artifact; onSaved: (a: Artifact) => void }) {
  const [f, setF] = useState({ title: artifact.title, summary: artifact.summary, content: artifact.content });
  useEffect(() => setF({ title: artifact.title, summary: artifact.summary, content: artifact.content }), [artifact]);
  const save = useMutation({
    // The API takes a title/summary change or content edits, each as one revision: both are sent when both
    // changed. Content changes are edits (the API replaces text it finds); the whole old text is one edit.
    mutationFn: async () => {
      const path = { params: { path: { id: artifact.id } } };
      let saved = artifact;
      if (f.title !== artifact.title || f.summary !== artifact.summary) {
        saved = await unwrap(api.PATCH("/api/v1/artifacts/{id}", { ...path, body: { title: f.title, summary: f.summary } }));
      }
      if (f.content !== artifact.content) {
        saved = await unwrap(api.PATCH("/api/v1/artifacts/{id}", { ...path, body: { edits: [{ oldText: artifact.content, newText: f.content }] } }));
      }
      return saved;
    },
    onSuccess: onSaved,
  });
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  return (
    <form className="card form" onSubmit={(e) => (e.preventDefault(), save.mutate())}>
      <h2>Edit</h2>
      <Field label="Title" required value={f.title} onChange={set("title")} />
      <Field label="Summary" value={f.summary} onChange={set("summary")} />
      <TextArea label={`Content (${artifact.type})`} rows={14} required value={f.content} onChange={set("content")} />
      <ErrorNote error={save.error} />
      {save.isSuccess && <Notice>Saved as revision {save.data.revision}.</Notice>}
      <Button type="submit" variant="primary" busy={save.isPending} disabled={artifact.status === "archived"}>Save a revision</Button>
    </form>
  );
}

/** Lines of `b` marked when they are not in `a` (a plain line comparison, enough to spot what changed). */
function RevisionText({ rev, other }: { rev: Revision; other?: Revision }) {
  const known = new Set((other?.content ?? "").split("\n"));
  return (
    <section className="card" aria-label={`Revision ${rev.revision}`}>
      <h3>Revision {rev.revision}: {rev.title}</h3>
      <p className="muted small">{formatDate(rev.created_at)}</p>
      <pre className="snippet">
        {rev.content.split("\n").map((line, i) => (
          <span key={i} className={other && !known.has(line) ? "changed" : undefined}>{line + "\n"}</span>
        ))}
      </pre>
    </section>
  );
}

function Revisions({ artifact }: { artifact: Artifact }) {
  const revs = useQuery({ queryKey: ["artifact-revisions", artifact.id, artifact.revision], queryFn: () => unwrap(api.GET("/api/v1/artifacts/{id}/revisions", { params: { path: { id: artifact.id }, query: { limit: 200 } } })) });
  const list = revs.data?.revisions ?? [];
  const [pick, setPick] = useState<{ a?: number; b?: number }>({});
  const a = list.find((r) => r.revision === pick.a) ?? list.at(-2) ?? list[0];
  const b = list.find((r) => r.revision === pick.b) ?? list.at(-1);
  const opts = list.map((r) => ({ value: String(r.revision), label: `Revision ${r.revision} (${formatDate(r.created_at)})` }));
  return (
    <section aria-labelledby="revisions-heading">
      <h2 id="revisions-heading">Revisions</h2>
      <ErrorNote error={revs.error} />
      {revs.isLoading && <Loading />}
      {a && b && (
        <>
          <div className="inline-form">
            <Select label="Left" value={String(a.revision)} options={opts} onChange={(e) => setPick({ ...pick, a: Number(e.target.value) })} />
            <Select label="Right" value={String(b.revision)} options={opts} onChange={(e) => setPick({ ...pick, b: Number(e.target.value) })} />
          </div>
          <p className="muted small">Lines not in the other revision are highlighted.</p>
          <div className="split">
            <RevisionText rev={a} other={b} />
            <RevisionText rev={b} other={a} />
          </div>
        </>
      )}
    </section>
  );
}

function Lifecycle({ artifact, onChanged }: { artifact: Artifact; onChanged: (a: Artifact | null) => void }) {
  const [visibility, setVisibility] = useState<"private" | "public">(artifact.published?.visibility ?? "private");
  const id = { params: { path: { id: artifact.id } } };
  const publish = useMutation({ mutationFn: () => unwrap(api.POST("/api/v1/artifacts/{id}/publish", { ...id, body: { visibility } })), onSuccess: onChanged });
  const unpublish = useMutation({ mutationFn: () => unwrap(api.DELETE("/api/v1/artifacts/{id}/publish", id)), onSuccess: () => onChanged(null) });
  const archive = useMutation({
    mutationFn: () => (artifact.status === "archived" ? unwrap(api.POST("/api/v1/artifacts/{id}/restore", id)) : unwrap(api.POST("/api/v1/artifacts/{id}/archive", id))),
    onSuccess: onChanged,
  });
  return (
    <section className="card" aria-labelledby="publish-heading">
      <h2 id="publish-heading">Published page</h2>
      {artifact.published ? (
        <p>
          Published ({artifact.published.visibility}) on {formatDate(artifact.published.published_at)}: <a href={artifact.published.url} target="_blank" rel="noreferrer">open the published page</a>
        </p>
      ) : (
        <p className="muted">Not published.</p>
      )}
      <div className="inline-form">
        <Select label="Who can open it" value={visibility} onChange={(e) => setVisibility(e.target.value as typeof visibility)} options={[{ value: "private", label: "Signed-in members" }, { value: "public", label: "Anyone with the link" }]} />
        <Button variant="primary" busy={publish.isPending} onClick={() => publish.mutate()}>{artifact.published ? "Publish again" : "Publish"}</Button>
        {artifact.published && <Button busy={unpublish.isPending} onClick={() => unpublish.mutate()}>Unpublish</Button>}
        <Button variant="ghost" busy={archive.isPending} onClick={() => (artifact.status === "archived" || confirmed("Archive this artifact? Its published page stops being served until it is restored.")) && archive.mutate()}>
          {artifact.status === "archived" ? "Restore" : "Archive"}
        </Button>
      </div>
      <ErrorNote error={publish.error ?? unpublish.error ?? archive.error} />
    </section>
  );
}

export function ArtifactDetail({ orgId, kbId, artifactId, onChanged }: { orgId: string; kbId: string; artifactId: string; onChanged: () => void }) {
  const qc = useQueryClient();
  const key = ["artifact", artifactId];
  const artifact = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET("/api/v1/artifacts/{id}", { params: { path: { id: artifactId } } })) });
  const changed = (a: Artifact | null) => {
    if (a) qc.setQueryData(key, a);
    else void artifact.refetch();
    onChanged();
  };
  const a = artifact.data;
  return (
    <>
      <p className="crumbs"><Link to={`/o/${orgId}/kb/${kbId}/artifacts`}>All artifacts</Link> /</p>
      <ErrorNote error={artifact.error} />
      {artifact.isLoading && <Loading />}
      {a && (
        <>
          <h2>{a.title} <Badge>revision {a.revision}</Badge> {a.status === "archived" && <Badge tone="bad">archived</Badge>}</h2>
          <Lifecycle artifact={a} onChanged={changed} />
          <Editor artifact={a} onSaved={changed} />
          {a.status === "active" && <Revisions artifact={a} />}
        </>
      )}
    </>
  );
}

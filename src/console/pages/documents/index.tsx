import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState, type DragEvent } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { Badge, Button, confirmed, Empty, ErrorNote, Loading, Pager, formatBytes, formatDate } from "../../ui/ui";
import { KbHeader, useKnowledgeBase } from "../kb-header";
import { StageBadge, Stages, stageOf } from "./stages";
import { eachLimited, uploadFile, type UploadItem } from "./upload";
import { WebPages } from "./web";

type Doc = Schemas["Document"];
const BUSY = new Set(["pending_upload", "queued", "processing"]);
const PAGE = 100;

function Uploader({ kb, onUploaded }: { kb: { id: string; tenant_id: string }; onUploaded: () => void }) {
  const [items, setItems] = useState<UploadItem[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const start = (files: File[]) => {
    if (!files.length) return;
    const added = files.map((f, i) => ({ key: `${Date.now()}-${i}-${f.name}`, name: f.name, size: f.size, sent: 0 }));
    setItems((cur) => [...added, ...cur]);
    const update = (key: string) => (patch: Partial<UploadItem>) => setItems((cur) => cur.map((it) => (it.key === key ? { ...it, ...patch } : it)));
    void eachLimited(
      files.map((f, i) => [f, added[i].key] as const),
      3,
      async ([file, key]) => {
        await uploadFile(kb, file, update(key), onUploaded);
        onUploaded();
      },
    );
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    start([...e.dataTransfer.files]);
  };
  return (
    <section className="card" aria-labelledby="upload-title">
      <h2 id="upload-title">Upload files</h2>
      <div
        className={`dropzone ${over ? "over" : ""}`}
        onDragOver={(e) => (e.preventDefault(), setOver(true))}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
        data-testid="dropzone"
      >
        <p>Drop files here (PDF, Word, Excel, PowerPoint, HTML, Markdown, text, CSV, JSON), or</p>
        <Button variant="primary" onClick={() => input.current?.click()}>Choose files</Button>
        <input ref={input} type="file" multiple hidden aria-label="Files to upload" onChange={(e) => (start([...(e.target.files ?? [])]), (e.target.value = ""))} />
      </div>
      {items.length > 0 && (
        <ul className="uploads" aria-label="Uploads">
          {items.map((it) => {
            const stage = it.error ? "failed" : it.sent < 1 ? "uploading" : stageOf(it.status);
            return (
              <li key={it.key} data-upload={it.name}>
                <span className="upload-name">{it.name}</span> <span className="muted">{formatBytes(it.size)}</span>
                <Stages name={it.name} stage={stage} sent={it.sent} uploaded={it.sent >= 1} />
                {it.error && <p className="note note-error" role="alert">{it.error}</p>}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

function DocumentRow({ doc, onChanged }: { doc: Doc; onChanged: () => void }) {
  const download = useMutation({
    mutationFn: () => unwrap(api.GET("/api/v1/documents/{id}/download", { params: { path: { id: doc.id } } })),
    onSuccess: (d) => {
      const a = document.createElement("a");
      a.href = d.download_url;
      a.download = d.filename;
      a.click();
    },
  });
  const reprocess = useMutation({ mutationFn: () => unwrap(api.POST("/api/v1/documents/{id}/reprocess", { params: { path: { id: doc.id } } })), onSuccess: onChanged });
  const remove = useMutation({ mutationFn: () => unwrap(api.DELETE("/api/v1/documents/{id}", { params: { path: { id: doc.id } } })), onSuccess: onChanged });
  const stage = stageOf(doc.status);
  return (
    <tr data-document={doc.filename}>
      <td className="wrap">
        {doc.source_url ? <a href={doc.source_url} rel="noreferrer" target="_blank">{doc.filename}</a> : doc.filename}
        {doc.parent_document_id && <> <Badge>text version</Badge></>}
        {doc.status === "failed" && doc.error && <p className="note note-error">Failed: {doc.error}</p>}
      </td>
      <td><StageBadge name={doc.filename} stage={stage} /></td>
      <td className="nowrap">{formatBytes(doc.size_bytes)}</td>
      <td>{doc.chunk_count}{doc.page_count ? ` · ${doc.page_count} pages` : ""}</td>
      <td>{formatDate(doc.updated_at)}</td>
      <td className="actions">
        <Button onClick={() => download.mutate()} busy={download.isPending}>Download</Button>
        <Button onClick={() => reprocess.mutate()} busy={reprocess.isPending} disabled={BUSY.has(doc.status)}>Reprocess</Button>
        <Button variant="ghost" onClick={() => confirmed(`Delete ${doc.filename}? Answers stop citing it.`) && remove.mutate()} busy={remove.isPending}>Delete</Button>
        <ErrorNote error={download.error ?? reprocess.error ?? remove.error} />
      </td>
    </tr>
  );
}

/** A knowledge base's documents: drag-and-drop uploads with live stages, web pages, reprocess, download. */
export function Documents({ orgId, kbId }: { orgId: string; kbId: string }) {
  const qc = useQueryClient();
  const kb = useKnowledgeBase(kbId);
  const [offset, setOffset] = useState(0);
  const key = ["documents", kbId];
  const docs = useQuery({
    queryKey: [...key, offset],
    queryFn: () => unwrap(api.GET("/api/v1/documents", { params: { query: { kb_id: kbId, limit: PAGE, offset } } })),
    // Live while anything is on its way: the stages move without a reload.
    refetchInterval: (q) => (q.state.data?.documents.some((d) => BUSY.has(d.status)) ? 1000 : false),
  });
  const refresh = () => void qc.invalidateQueries({ queryKey: key });
  const list = docs.data?.documents ?? [];
  return (
    <>
      <KbHeader orgId={orgId} kbId={kbId} page="Documents" />
      {kb.data && <Uploader kb={kb.data} onUploaded={refresh} />}
      {kb.data && <WebPages kb={kb.data} onAdded={refresh} />}
      <section aria-labelledby="docs-title">
        <h2 id="docs-title">Documents {docs.data && <span className="muted">({docs.data.total})</span>}</h2>
        {docs.isLoading && <Loading />}
        <ErrorNote error={docs.error} />
        {docs.data && !list.length && (
          <Empty title="No documents yet.">
            <p>Drop files above or add a web page. When they are processed, ask about them in the playground.</p>
          </Empty>
        )}
        {list.length > 0 && (
          <div className="table-wrap"><table className="table">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Stage</th><th scope="col">Size</th><th scope="col">Chunks</th><th scope="col">Updated</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
            </thead>
            <tbody>
              {list.map((d) => <DocumentRow key={d.id} doc={d} onChanged={refresh} />)}
            </tbody>
          </table></div>
        )}
        {docs.data && <Pager total={docs.data.total} limit={PAGE} offset={offset} onChange={setOffset} what="documents" />}
      </section>
    </>
  );
}

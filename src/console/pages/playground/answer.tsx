import { useMutation } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { api, unwrap } from "../../api/client";
import { Badge, Button, Dialog, ErrorNote } from "../../ui/ui";
import { Chart } from "../../ui/chart";
import { ResultTable } from "../data/result-table";
import type { Source, Turn } from "./stream";

function sourceTitle(s: Source): string {
  return `${s.filename ?? (s.memory_id ? "Memory" : s.url ?? "Source")}${s.page ? `, page ${s.page}` : ""}`;
}

/** The passage an answer cites, with its document to download. */
function Passage({ source }: { source: Source }) {
  const download = useMutation({
    mutationFn: () => unwrap(api.GET("/api/v1/documents/{id}/download", { params: { path: { id: source.document_id! } } })),
    onSuccess: (d) => window.open(d.download_url, "_blank", "noopener"),
  });
  return (
    <>
      <p className="muted">{sourceTitle(source)}</p>
      <blockquote className="passage" data-testid="passage">{source.text}</blockquote>
      <div className="row">
        {source.url && <a href={source.url} target="_blank" rel="noreferrer">Open the page</a>}
        {source.document_id && <Button onClick={() => download.mutate()} busy={download.isPending}>Download the document</Button>}
      </div>
      <ErrorNote error={download.error} />
    </>
  );
}

/** Text with its [n] markers as buttons that open the cited passage. */
function CitedText({ text, sources, open }: { text: string; sources: Source[]; open: (s: Source) => void }) {
  const parts = text.split(/(\[\d+\])/g);
  return (
    <p className="answer-text">
      {parts.map((p, i) => {
        const n = /^\[(\d+)\]$/.exec(p)?.[1];
        const s = n ? sources.find((x) => x.index === Number(n)) : undefined;
        if (!s) return <Fragment key={i}>{p}</Fragment>;
        return (
          <button key={i} type="button" className="cite" onClick={() => open(s)} aria-label={`Source ${n}: ${sourceTitle(s)}`}>
            [{n}]
          </button>
        );
      })}
    </p>
  );
}

export function TurnView({ turn }: { turn: Turn }) {
  const [open, setOpen] = useState<Source | null>(null);
  if (turn.role === "user") {
    return (
      <li className="turn turn-user">
        <p className="sr-only">You asked:</p>
        <p>{turn.content}</p>
      </li>
    );
  }
  return (
    <li className="turn turn-assistant" data-status={turn.status}>
      <p className="sr-only">Answer:</p>
      {turn.steps.length > 0 && (
        <details className="steps">
          <summary>{turn.steps.length} steps (thoughts and tool calls)</summary>
          <ol>
            {turn.steps.map((s, i) => (
              <li key={i} className={s.isError ? "bad" : ""}>
                <Badge tone={s.kind === "thought" ? "neutral" : s.isError ? "bad" : "busy"}>{s.kind === "thought" ? "thought" : s.kind === "call" ? "tool call" : "tool result"}</Badge> {s.text}
              </li>
            ))}
          </ol>
        </details>
      )}
      {turn.previews?.map((p, i) => (
        <details key={`p${i}`} className="steps" open={!turn.charts?.length}>
          <summary>Data: {p.row_count} row{p.row_count === 1 ? "" : "s"} from <code>{p.sql}</code></summary>
          <ResultTable columns={p.columns} rows={p.rows} caption={`Rows of ${p.sql}`} />
        </details>
      ))}
      {turn.charts?.map((spec, i) => <Chart key={`c${i}`} spec={spec} />)}
      {turn.content ? <CitedText text={turn.content} sources={turn.sources} open={setOpen} /> : turn.status === "streaming" && <p className="muted">Searching the knowledge base…</p>}
      {turn.status === "partial" && <p className="muted">Stopped: the answer so far is kept.</p>}
      {turn.status === "error" && <ErrorNote error={new Error(turn.error ?? "The answer failed.")} />}
      {turn.sources.length > 0 && turn.status !== "streaming" && (
        <div className="sources">
          <h3>Sources</h3>
          <ol>
            {turn.sources.map((s) => (
              <li key={s.index}>
                <button type="button" className="link" onClick={() => setOpen(s)}>
                  [{s.index}] {sourceTitle(s)}
                </button>
              </li>
            ))}
          </ol>
        </div>
      )}
      {turn.usage && turn.status !== "streaming" && (
        <p className="muted small">
          {turn.usage.total_tokens} tokens · {turn.usage.credits} credits
        </p>
      )}
      <Dialog open={!!open} title={open ? `Source ${open.index}` : ""} onClose={() => setOpen(null)}>
        {open && <Passage source={open} />}
      </Dialog>
    </li>
  );
}

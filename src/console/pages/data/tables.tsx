import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { Link } from "../../router";
import { Badge, Button, Empty, ErrorNote, Loading, TextArea } from "../../ui/ui";
import { KbHeader } from "../kb-header";
import { ChartBuilder } from "./chart-builder";
import { ResultTable } from "./result-table";

type Table = Schemas["Table"];

function TableCard({ t, onQuery }: { t: Table; onQuery: (sql: string) => void }) {
  return (
    <li className="card">
      <h3>
        <code>{t.name}</code> {t.truncated && <Badge tone="bad">cut short</Badge>}
      </h3>
      <p className="muted small">
        {t.filename}
        {t.sheet ? `, sheet ${t.sheet}` : ""} · {t.row_count.toLocaleString()} rows · {t.columns.length} columns
      </p>
      <ul className="columns small">
        {t.columns.map((c) => (
          <li key={c.name}>
            <code>{c.name}</code> {c.type}
            {c.format ? ` (${c.format})` : ""}
            {c.source_name !== c.name && <span className="muted"> — “{c.source_name}”</span>}
          </li>
        ))}
      </ul>
      <Button onClick={() => onQuery(`SELECT * FROM "${t.name}" LIMIT 20`)}>Query this table</Button>
    </li>
  );
}

function SqlResult({ result }: { result: Schemas["SqlResult"] }) {
  return (
    <section aria-labelledby="result-heading">
      <h2 id="result-heading">Result</h2>
      <p className="muted result-meta" role="status">
        {result.row_count} row{result.row_count === 1 ? "" : "s"}
        {result.truncated ? " (more exist: only the first 1,000 are shown)" : ""}
      </p>
      <ResultTable columns={result.columns} rows={result.rows} caption="Query result" />
      {result.rows.length > 0 && <ChartBuilder key={result.columns.join("\u0000")} columns={result.columns} rows={result.rows} />}
    </section>
  );
}

/** A knowledge base's tables (from its spreadsheets and data files), a SQL editor, the result and its chart. */
export default function Tables({ orgId, kbId }: { orgId: string; kbId: string }) {
  // Tables appear as their files finish processing: the list refreshes on its own.
  const tables = useQuery({ queryKey: ["tables", kbId], refetchInterval: 10_000, queryFn: () => unwrap(api.GET("/api/v1/knowledge-bases/{id}/tables", { params: { path: { id: kbId } } })) });
  const [sql, setSql] = useState("");
  const list = tables.data?.tables ?? [];
  useEffect(() => {
    if (!sql && list[0]) setSql(`SELECT * FROM "${list[0].name}" LIMIT 20`);
  }, [list, sql]);
  const run = useMutation({ mutationFn: (query: string) => unwrap(api.POST("/api/v1/knowledge-bases/{id}/sql", { params: { path: { id: kbId } }, body: { query } })) });
  return (
    <>
      <KbHeader orgId={orgId} kbId={kbId} page="Tables" />
      <ErrorNote error={tables.error} />
      {tables.isLoading && <Loading what="Loading the tables" />}
      {tables.data && !list.length && (
        <Empty title="No tables yet.">
          <p>
            Upload a CSV, XLSX or JSON file on the <Link to={`/o/${orgId}/kb/${kbId}`}>Documents</Link> page: each sheet becomes a table you can query here and that chats use for numbers.
          </p>
        </Empty>
      )}
      {list.length > 0 && (
        <ul className="cards grid" aria-label="Tables">
          {list.map((t) => (
            <TableCard key={`${t.document_id}:${t.name}`} t={t} onQuery={(q) => (setSql(q), run.mutate(q))} />
          ))}
        </ul>
      )}
      <form className="card form sql-editor" onSubmit={(e) => (e.preventDefault(), run.mutate(sql))}>
        <TextArea label="SQL (one read-only SELECT or WITH statement, SQLite dialect)" rows={5} spellCheck={false} value={sql} onChange={(e) => setSql(e.target.value)} required maxLength={10000} />
        <div className="row">
          <Button type="submit" variant="primary" busy={run.isPending}>Run query</Button>
        </div>
        <ErrorNote error={run.error} />
      </form>
      {run.data && <SqlResult result={run.data} />}
    </>
  );
}

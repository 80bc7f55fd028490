import type { Env } from "../../env";
import type { DocumentKind } from "../documents/types";
import { tableSources, TABULAR_KINDS, type TableSource } from "./extract";
import { ColumnInference, convertCell, type Cell } from "./infer";
import { columnNames, tableBaseName } from "./names";
import { tablesStore } from "./service";
import type { CommitTable, StoredColumn } from "./catalog";

/**
 * Limits of connected data (README "Connected data"). Past them a table is
 * loaded up to the limit and marked `truncated` (rows), or its extra columns
 * are left out (`dropped_columns`); the document itself is still indexed
 * for search in full.
 */
export const TABLE_LIMITS = {
  /** Data rows per table. */
  maxRows: 1_000_000,
  /** Columns per table. */
  maxColumns: 100,
  /** Tables per document (sheets of a workbook, record arrays of a JSON object). */
  maxTablesPerDocument: 50,
  /** The knowledge base's whole store; loading stops past it. */
  maxStoreBytes: 2 * 1024 ** 3,
  /** Rows per RPC batch, and characters per batch. */
  batchRows: 2_000,
  batchChars: 1_000_000,
};

interface LoadDoc {
  id: string;
  knowledgeBaseId: string;
  filename: string;
  ingestSeq: number;
}

/** Column types from a first pass over the rows; all-empty unnamed columns (spreadsheet gaps) are left out. */
function typeColumns(src: TableSource, maxRows: number) {
  let width = src.header.length;
  const inference: ColumnInference[] = [];
  const filled: boolean[] = [];
  let sourceRows = 0;
  for (const row of src.rows()) {
    sourceRows++;
    if (sourceRows > maxRows) continue;
    if (row.length > width) width = row.length;
    for (let i = 0; i < row.length; i++) {
      (inference[i] ??= new ColumnInference()).observe(row[i]);
      if (row[i].trim() !== "") filled[i] = true;
    }
  }
  const header = Array.from({ length: width }, (_, i) => (src.header[i] ?? "").trim());
  const keep = header.map((_, i) => i).filter((i) => header[i] !== "" || filled[i]);
  const names = columnNames(keep.map((i) => header[i]));
  const columns = keep.map((i, j) => ({ index: i, spec: (inference[i] ?? new ColumnInference()).spec(names[j], header[i]) }));
  return { columns, sourceRows };
}

/**
 * Loads the tables of a CSV, XLSX or JSON document into its knowledge base's
 * store, replacing the ones an earlier processing of it made (one atomic
 * commit at the end; until then queries see the old tables). Rows are read
 * twice (types, then values) and sent in batches, so a large file is never
 * held as typed rows. Returns the number of tables, or null for other kinds.
 */
export async function loadDocumentTables(env: Env, doc: LoadDoc, kind: DocumentKind, bytes: Uint8Array): Promise<number | null> {
  if (!TABULAR_KINDS.has(kind)) return null;
  const limits = TABLE_LIMITS;
  const store = tablesStore(env, doc.knowledgeBaseId);
  const sources = tableSources(kind, bytes).slice(0, limits.maxTablesPerDocument);
  const tables: CommitTable[] = [];
  let full = false;
  for (const src of sources) {
    if (full) break;
    const typed = typeColumns(src, limits.maxRows);
    const kept = typed.columns.slice(0, limits.maxColumns);
    if (!kept.length) continue;
    const columns: StoredColumn[] = kept.map(({ spec }) => ({
      name: spec.name,
      type: spec.type,
      ...(spec.format ? { format: spec.format } : {}),
      source: spec.source,
    }));
    const { stage } = await store.stage({ documentId: doc.id, generation: doc.ingestSeq, columns });
    let batch: Cell[][] = [];
    let chars = 0;
    let loaded = 0;
    const flush = async () => {
      if (!batch.length) return;
      const { databaseSize } = await store.append(stage, kept.length, batch);
      batch = [];
      chars = 0;
      if (databaseSize > limits.maxStoreBytes) full = true;
    };
    for (const row of src.rows()) {
      if (loaded >= limits.maxRows || full) break;
      const cells = kept.map(({ index, spec }) => convertCell(row[index], spec));
      for (const c of cells) chars += typeof c === "string" ? c.length : 8;
      batch.push(cells);
      loaded++;
      if (batch.length >= limits.batchRows || chars >= limits.batchChars) await flush();
    }
    await flush();
    tables.push({
      stage,
      baseName: tableBaseName(doc.filename, src.part),
      part: src.part ?? null,
      columns,
      sourceRowCount: typed.sourceRows,
      truncated: loaded < typed.sourceRows,
      droppedColumns: typed.columns.length - kept.length,
    });
  }
  // Also when there is no table (any more): the document's earlier tables go.
  const { tables: committed } = await store.commit({ documentId: doc.id, generation: doc.ingestSeq, filename: doc.filename, tables });
  return committed.length;
}

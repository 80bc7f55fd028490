import type { Env } from "../../env";
import { Slicer } from "../../lib/slices";
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
  /** Data rows per document, all its tables together (the first tables get theirs first). */
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

/**
 * Column types from a first pass over the rows; all-empty unnamed columns
 * (spreadsheet gaps) are left out. Rows may be sparse: only present cells are
 * visited, so a cell far to the right does not cost a pass over the gap.
 */
async function typeColumns(src: TableSource, maxRows: number, slicer: Slicer) {
  let width = src.header.length;
  const inference: ColumnInference[] = [];
  const filled: boolean[] = [];
  let sourceRows = 0;
  for (const row of src.rows()) {
    sourceRows++;
    if (slicer.due()) await slicer.pause();
    if (sourceRows > maxRows) continue;
    if (row.length > width) width = row.length;
    row.forEach((v, i) => {
      (inference[i] ??= new ColumnInference()).observe(v);
      if (v.trim() !== "") filled[i] = true;
    });
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
 * held as typed rows; both passes run in slices that yield. Returns the
 * number of tables, or null for other kinds.
 */
export async function loadDocumentTables(
  env: Env,
  doc: LoadDoc,
  kind: DocumentKind,
  bytes: Uint8Array,
  limits: typeof TABLE_LIMITS = TABLE_LIMITS,
): Promise<number | null> {
  if (!TABULAR_KINDS.has(kind)) return null;
  const store = tablesStore(env, doc.knowledgeBaseId);
  const sources = (await tableSources(kind, bytes)).slice(0, limits.maxTablesPerDocument);
  const tables: CommitTable[] = [];
  const slicer = new Slicer();
  let full = false;
  let rowBudget = limits.maxRows;
  for (const src of sources) {
    if (full) break;
    const typed = await typeColumns(src, rowBudget, slicer);
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
      if (loaded >= rowBudget || full) break;
      const cells = kept.map(({ index, spec }) => convertCell(row[index] ?? "", spec));
      for (const c of cells) chars += typeof c === "string" ? c.length : 8;
      batch.push(cells);
      loaded++;
      if (batch.length >= limits.batchRows || chars >= limits.batchChars) await flush();
      if (slicer.due(cells.length)) await slicer.pause();
    }
    await flush();
    rowBudget -= loaded;
    tables.push({
      stage,
      baseName: tableBaseName(doc.filename, src.part),
      part: src.part ?? null,
      columns,
      sourceRowCount: typed.sourceRows,
      truncated: loaded < typed.sourceRows || !!src.cut,
      droppedColumns: typed.columns.length - kept.length,
    });
  }
  // Also when there is no table (any more): the document's earlier tables go.
  const { tables: committed } = await store.commit({ documentId: doc.id, generation: doc.ingestSeq, filename: doc.filename, tables });
  return committed.length;
}

import type { ColumnFormat, ColumnType } from "./infer";

/** The store's catalog of tables (`_kb_tables`), their staging area, and the shapes the store answers with. */

export interface StoredColumn {
  name: string;
  type: ColumnType;
  format?: ColumnFormat;
  /** The header as it was in the file. */
  source: string;
}

export interface TableInfo {
  name: string;
  document_id: string;
  filename: string;
  /** Sheet (XLSX) or key (JSON object) the table came from. */
  part: string | null;
  columns: StoredColumn[];
  row_count: number;
  /** Data rows in the file; more than row_count when the table was cut at the row limit. */
  source_row_count: number;
  truncated: boolean;
  /** Columns of the file left out (past the column limit). */
  dropped_columns: number;
  created_at: string;
}

export interface StageInput {
  documentId: string;
  generation: number;
  columns: StoredColumn[];
}

export interface CommitTable {
  stage: string;
  baseName: string;
  part: string | null;
  columns: StoredColumn[];
  sourceRowCount: number;
  truncated: boolean;
  droppedColumns: number;
}

export const CATALOG = `CREATE TABLE IF NOT EXISTS _kb_tables (
  name TEXT PRIMARY KEY, document_id TEXT NOT NULL, generation INTEGER NOT NULL, filename TEXT NOT NULL, part TEXT,
  columns TEXT NOT NULL, row_count INTEGER NOT NULL, source_row_count INTEGER NOT NULL, truncated INTEGER NOT NULL,
  dropped_columns INTEGER NOT NULL DEFAULT 0, ordinal INTEGER NOT NULL, created_at TEXT NOT NULL)`;
export const STAGING = `CREATE TABLE IF NOT EXISTS _kb_staging (
  name TEXT PRIMARY KEY, document_id TEXT NOT NULL, generation INTEGER NOT NULL, created_at TEXT NOT NULL)`;

export type CatalogRow = {
  name: string;
  document_id: string;
  filename: string;
  part: string | null;
  columns: string;
  row_count: number;
  source_row_count: number;
  truncated: number;
  dropped_columns: number;
  created_at: string;
};

export const toInfo = (r: CatalogRow): TableInfo => ({
  name: r.name,
  document_id: r.document_id,
  filename: r.filename,
  part: r.part,
  columns: JSON.parse(r.columns) as StoredColumn[],
  row_count: r.row_count,
  source_row_count: r.source_row_count,
  truncated: !!r.truncated,
  dropped_columns: r.dropped_columns,
  created_at: r.created_at,
});

export const sqlType = (t: ColumnType) => (t === "integer" ? "INTEGER" : t === "real" ? "REAL" : "TEXT");

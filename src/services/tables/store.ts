import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import type { Cell } from "./infer";
import { quoteIdent, uniqueName } from "./names";
import { checkSqlText } from "./sql-guard";
import { CATALOG, type CatalogRow, type CommitTable, sqlType, type StageInput, STAGING, type TableInfo, toInfo } from "./catalog";
import { databaseReason, programRefusal, type ProgramStep, WRAP_PREFIX } from "./program";
import { COLSTATS, MAX_PLAN_ROWS, statementCost } from "./plan-sources";

/**
 * The knowledge base's SQL store: one SQLite-backed Durable Object per
 * knowledge base (named by its id), so one knowledge base's queries can only
 * ever see its own tables. It holds the tables loaded from the knowledge
 * base's CSV, XLSX and JSON documents, a catalog of them (`_kb_tables`), and
 * answers read-only queries.
 *
 * Every RPC method returns plain JSON (STACK-WAVE2: DO RPC return types).
 */

export type QueryOutcome =
  | { ok: true; columns: string[]; rows: Cell[][]; row_count: number; truncated: boolean; elapsed_ms: number }
  | { ok: false; code: "invalid_sql" | "query_timeout"; message: string };

/** Result cells past this many characters in total end the result early (`truncated`). */
const MAX_RESULT_CHARS = 4_000_000;

/** Why a bounded statement is still refused: its bound is past what runs within the time limit. */
function tooCostly(bound: { rows: number; weight: number; cost: number }, timeoutMs: number): string {
  const within = `more than the store runs within ${timeoutMs / 1000} s (at most ${MAX_PLAN_ROWS.toExponential(0)})`;
  if (bound.weight < 2 || bound.rows > MAX_PLAN_ROWS) {
    return `The query could go through about ${bound.rows.toExponential(1)} row combinations (a join without a matching condition, or of large subqueries?), ${within}; join on matching columns or aggregate first`;
  }
  return `The query's expressions could build values of up to ${Math.round((bound.weight * 64) / 1024)} KB on each of about ${bound.rows.toExponential(1)} rows, ${within}; use fewer or smaller replace()/printf()/concatenations`;
}


declare module "../../env" {
  interface DurableObjectClasses {
    KbTables: KbTables;
  }
}

export class KbTables extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(CATALOG);
    ctx.storage.sql.exec(STAGING);
    ctx.storage.sql.exec(COLSTATS);
  }

  private get sql() {
    return this.ctx.storage.sql;
  }

  /** A new, empty staging table for one table of a document being loaded; hidden until `commit`. */
  async stage(input: StageInput): Promise<{ stage: string }> {
    const stage = `_stage_${crypto.randomUUID().replace(/-/g, "")}`;
    const cols = input.columns.map((c) => `${quoteIdent(c.name)} ${sqlType(c.type)}`).join(", ");
    this.ctx.storage.transactionSync(() => {
      this.sql.exec(`CREATE TABLE ${quoteIdent(stage)} (${cols})`);
      this.sql.exec("INSERT INTO _kb_staging (name, document_id, generation, created_at) VALUES (?, ?, ?, ?)", stage, input.documentId, input.generation, new Date().toISOString());
    });
    return { stage };
  }

  /** Appends typed rows to a staging table (one JSON parameter carries the batch). Returns the store's size in bytes. */
  async append(stage: string, width: number, rows: Cell[][]): Promise<{ databaseSize: number }> {
    const known = this.sql.exec("SELECT 1 FROM _kb_staging WHERE name = ?", stage).toArray().length;
    if (!known) throw new Error(`staging table ${stage} no longer exists (the document was deleted or loaded again)`);
    const values = Array.from({ length: width }, (_, i) => `json_extract(value, '$[${i}]')`).join(", ");
    this.sql.exec(`INSERT INTO ${quoteIdent(stage)} SELECT ${values} FROM json_each(?)`, JSON.stringify(rows));
    return { databaseSize: this.sql.databaseSize };
  }

  /**
   * Makes a document's staged tables its tables, atomically: its previous
   * tables (an earlier processing) go in the same transaction. An older
   * generation than the one already committed is refused (a late delivery).
   */
  async commit(input: { documentId: string; generation: number; filename: string; tables: CommitTable[] }): Promise<{ committed: boolean; tables: TableInfo[] }> {
    let committed = false;
    this.ctx.storage.transactionSync(() => {
      const current = this.sql.exec<{ g: number }>("SELECT max(generation) AS g FROM _kb_tables WHERE document_id = ?", input.documentId).one().g;
      if (current !== null && current > input.generation) {
        for (const t of input.tables) this.dropStage(t.stage);
        return;
      }
      this.dropTablesOf(input.documentId);
      const taken = new Set(this.sql.exec<{ name: string }>("SELECT name FROM _kb_tables").toArray().map((r) => r.name));
      const now = new Date().toISOString();
      input.tables.forEach((t, ordinal) => {
        const name = uniqueName(t.baseName, taken);
        this.sql.exec(`ALTER TABLE ${quoteIdent(t.stage)} RENAME TO ${quoteIdent(name)}`);
        this.sql.exec("DELETE FROM _kb_staging WHERE name = ?", t.stage);
        const rowCount = this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${quoteIdent(name)}`).one().n;
        this.sql.exec(
          `INSERT INTO _kb_tables (name, document_id, generation, filename, part, columns, row_count, source_row_count, truncated, dropped_columns, ordinal, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          name, input.documentId, input.generation, input.filename, t.part, JSON.stringify(t.columns), rowCount,
          Math.max(t.sourceRowCount, rowCount), t.truncated ? 1 : 0, t.droppedColumns, ordinal, now,
        );
      });
      // Staging left by attempts that never finished (same or older generation).
      for (const s of this.sql.exec<{ name: string }>("SELECT name FROM _kb_staging WHERE document_id = ? AND generation <= ?", input.documentId, input.generation).toArray()) {
        this.dropStage(s.name);
      }
      committed = true;
    });
    return { committed, tables: committed ? this.tablesOf(input.documentId) : [] };
  }

  private dropStage(stage: string) {
    this.sql.exec(`DROP TABLE IF EXISTS ${quoteIdent(stage)}`);
    this.sql.exec("DELETE FROM _kb_staging WHERE name = ?", stage);
  }

  private dropTablesOf(documentId: string): number {
    const names = this.sql.exec<{ name: string }>("SELECT name FROM _kb_tables WHERE document_id = ?", documentId).toArray();
    for (const { name } of names) {
      this.sql.exec(`DROP TABLE IF EXISTS ${quoteIdent(name)}`);
      this.sql.exec("DELETE FROM _kb_colstats WHERE table_name = ?", name);
    }
    this.sql.exec("DELETE FROM _kb_tables WHERE document_id = ?", documentId);
    return names.length;
  }

  private tablesOf(documentId: string | null): TableInfo[] {
    const rows = documentId
      ? this.sql.exec<CatalogRow>("SELECT * FROM _kb_tables WHERE document_id = ? ORDER BY ordinal", documentId).toArray()
      : this.sql.exec<CatalogRow>("SELECT * FROM _kb_tables ORDER BY name").toArray();
    return rows.map(toInfo);
  }

  /** Removes a document's tables and any staging of it. */
  async dropDocument(documentId: string): Promise<{ dropped: number }> {
    let dropped = 0;
    this.ctx.storage.transactionSync(() => {
      dropped = this.dropTablesOf(documentId);
      for (const s of this.sql.exec<{ name: string }>("SELECT name FROM _kb_staging WHERE document_id = ?", documentId).toArray()) this.dropStage(s.name);
    });
    return { dropped };
  }

  async listTables(): Promise<TableInfo[]> {
    return this.tablesOf(null);
  }

  /** Documents that have tables or staging here (for reconciliation against D1). */
  async documentIds(): Promise<string[]> {
    return this.sql
      .exec<{ id: string }>("SELECT document_id AS id FROM _kb_tables UNION SELECT document_id FROM _kb_staging")
      .toArray()
      .map((r) => r.id);
  }

  async stats(): Promise<{ tables: number; databaseSize: number }> {
    const n = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM _kb_tables").one().n;
    return { tables: n, databaseSize: this.sql.databaseSize };
  }

  /** Everything goes (the knowledge base was deleted). */
  async drop(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.sql.exec(CATALOG);
    this.sql.exec(STAGING);
    this.sql.exec(COLSTATS);
  }

  /**
   * Runs one read-only query. The database decides, in three ways:
   * 1. the statement is wrapped as `SELECT * FROM (<query>) LIMIT n`, which
   *    SQLite parses only when the query is exactly one SELECT/WITH/VALUES
   *    statement (a second statement, an INSERT, PRAGMA or ATTACH is a syntax
   *    error there);
   * 2. SQLite compiles it (`EXPLAIN`) and the program is refused when it asks
   *    for a write transaction, opens any table for writing, touches the
   *    schema, reads the schema table or the store's own tables, or opens a
   *    virtual table;
   * 3. it runs inside a storage transaction that is always rolled back, and a
   *    run that reports written rows is refused.
   * The runtime itself refuses ATTACH, extension loading and functions outside
   * its allowlist. `maxRows` rows at most come back (`truncated` when more).
   *
   * Time: SQLite in a Durable Object cannot be interrupted from outside, and
   * while it runs nothing else in the isolate does. So a statement runs only
   * when its query plan bounds the rows it visits (plan-cost.ts), times what
   * one row's expressions can cost (row-cost.ts), below MAX_PLAN_ROWS: a
   * recursive CTE, a step or construct that cannot be bounded, or a bound past
   * the limit (a cross join of large tables or of subqueries over them, values
   * built up to megabytes per row) is refused as invalid_sql, saying why,
   * before anything runs. Between
   * the rows that come back the elapsed time is checked too (a stream of rows
   * stops at the limit wherever the clock moves), and the caller races the
   * call against the limit.
   */
  async query(text: string, opts: { maxRows: number; timeoutMs: number }): Promise<QueryOutcome> {
    const started = Date.now();
    const checked = checkSqlText(text);
    if (!checked.ok) return { ok: false, code: "invalid_sql", message: checked.message };
    const wrapped = `${WRAP_PREFIX}${checked.body}\n) LIMIT ${opts.maxRows + 1}`;
    const refused = this.compileCheck(wrapped);
    if (refused) return { ok: false, code: "invalid_sql", message: refused };
    const program = this.sql.exec<ProgramStep>(`EXPLAIN ${wrapped}`).toArray();
    const bound = statementCost(this.sql, wrapped, program, opts.maxRows + 1);
    if ("refusal" in bound) return { ok: false, code: "invalid_sql", message: bound.refusal };
    if (bound.cost > MAX_PLAN_ROWS) return { ok: false, code: "invalid_sql", message: tooCostly(bound, opts.timeoutMs) };
    return this.runRolledBack(wrapped, opts, started);
  }

  /** Layer 2: SQLite compiles the statement; the reason to refuse its program, or null. */
  private compileCheck(statement: string): string | null {
    let program: ProgramStep[];
    try {
      program = this.sql.exec<ProgramStep>(`EXPLAIN ${statement}`).toArray();
    } catch (e) {
      return databaseReason(e);
    }
    const hidden = new Set(
      this.sql
        .exec<{ rootpage: number }>("SELECT rootpage FROM sqlite_master WHERE rootpage > 0 AND (name LIKE '\\_%' ESCAPE '\\' OR name LIKE 'sqlite%')")
        .toArray()
        .map((r) => r.rootpage),
    );
    hidden.add(1); // sqlite_schema
    return programRefusal(program, hidden);
  }

  /** Layer 3: runs the statement in a transaction that is always rolled back; a run that wrote is refused. */
  private runRolledBack(statement: string, opts: { maxRows: number; timeoutMs: number }, started = Date.now()): QueryOutcome {
    const ROLLBACK = new Error("kb-tables: read-only query rolled back");
    let outcome: QueryOutcome | null = null;
    try {
      this.ctx.storage.transactionSync(() => {
        const cursor = this.sql.exec(statement);
        const columns = cursor.columnNames;
        const rows: Cell[][] = [];
        let truncated = false;
        let timedOut = false;
        let chars = 0;
        for (const raw of cursor.raw()) {
          if (rows.length >= opts.maxRows) {
            truncated = true;
            break;
          }
          const row = raw.map((v): Cell => (v instanceof ArrayBuffer ? `[blob ${v.byteLength} bytes]` : (v as Cell)));
          for (const v of row) chars += typeof v === "string" ? v.length : 8;
          rows.push(row);
          if (chars > MAX_RESULT_CHARS) {
            truncated = true;
            break;
          }
          if (Date.now() - started > opts.timeoutMs) {
            timedOut = true;
            break;
          }
        }
        if (cursor.rowsWritten > 0) {
          outcome = { ok: false, code: "invalid_sql", message: "Only read-only queries are allowed: the statement wrote to the database (rolled back)" };
        } else if (timedOut || Date.now() - started > opts.timeoutMs) {
          outcome = { ok: false, code: "query_timeout", message: `The query ran longer than ${opts.timeoutMs / 1000} s` };
        } else {
          outcome = { ok: true, columns, rows, row_count: rows.length, truncated, elapsed_ms: Date.now() - started };
        }
        throw ROLLBACK;
      });
    } catch (e) {
      if (e !== ROLLBACK && !(e instanceof Error && e.message === ROLLBACK.message)) return { ok: false, code: "invalid_sql", message: databaseReason(e) };
    }
    return outcome!;
  }
}

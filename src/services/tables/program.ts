/**
 * What a compiled query may not do, read off its SQLite program (EXPLAIN): the store runs only programs that
 * neither write nor read the schema or its own tables, nor call refused functions.
 */

/** The prefix of the wrapped query: offsets in SQLite's messages are shifted back by its length. */
export const WRAP_PREFIX = "SELECT * FROM (\n";
/** Opcodes of a program that writes to the database or its schema (https://sqlite.org/opcode.html). */
const WRITE_OPCODES = new Set([
  "OpenWrite", "CreateBtree", "Destroy", "Clear", "ParseSchema", "DropTable", "DropIndex", "DropTrigger", "SetCookie",
  "VCreate", "VDestroy", "VUpdate", "VBegin", "VRename", "Vacuum", "IncrVacuum", "JournalMode", "Checkpoint",
  "LoadAnalysis", "SqlExec", "IntegrityCk", "Expire", "TableLock",
]);
/**
 * Functions refused even where the runtime would have them (it already refuses extension loading); zeroblob and
 * randomblob make values as large as a number asks, which no question about the data needs.
 */
const REFUSED_FUNCTIONS = new Set(["load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "sqlite_dbpage", "zipfile", "sqlar_uncompress", "zeroblob", "randomblob"]);

/** SQLite's message without the runtime's code suffix, offsets relative to the caller's own text. */
export function databaseReason(e: unknown): string {
  const raw = e instanceof Error ? e.message : String(e);
  return raw
    .replace(/: SQLITE_[A-Z_]+$/, "")
    .replace(/at offset (\d+)/, (_, n: string) => `at offset ${Math.max(0, Number(n) - WRAP_PREFIX.length)}`)
    .slice(0, 500);
}

export type ProgramStep = { opcode: string; p1: number; p2: number; p3: number; p4: string | null; p5: number };

/**
 * Why a compiled program may not run, or null: it asks for a write
 * transaction, opens a table for writing or changes the schema, reads the
 * schema table or one of the store's own tables (`hidden` root pages), opens a
 * virtual table, or calls a refused function.
 */
export function programRefusal(program: ProgramStep[], hidden: Set<number>): string | null {
  for (const op of program) {
    if (WRITE_OPCODES.has(op.opcode) || (op.opcode === "Transaction" && op.p2 !== 0)) {
      return `Only read-only queries are allowed: the statement would change the database (${op.opcode})`;
    }
    if ((op.opcode === "OpenRead" || op.opcode === "ReopenIdx") && hidden.has(op.p2)) {
      return "The schema table and the store's internal tables cannot be queried; list tables with GET /knowledge-bases/{id}/tables";
    }
    if (op.opcode === "VOpen") return "Virtual tables and table-valued functions (json_each, pragma_*) are not available";
    if ((op.opcode === "Function" || op.opcode === "PureFunc") && op.p4) {
      const fn = /^(\w+)\(/.exec(op.p4)?.[1]?.toLowerCase();
      if (fn && REFUSED_FUNCTIONS.has(fn)) return `The function ${fn} is not allowed`;
    }
  }
  return null;
}

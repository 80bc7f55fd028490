/**
 * What one row visit can cost, read off the compiled program (EXPLAIN): the
 * plan bound (plan-cost.ts) counts rows, but a row's expressions can build
 * values up to SQLite's 4 MB limit (replace() in replace(), printf widths,
 * sliding-window group_concat), and a million such rows run for hours. So the
 * largest value each register can hold is bounded from the data (the longest
 * cell of each column read) and the literals, through every function, and a
 * row visit is weighed by the bytes its functions can produce.
 *
 * The analysis does not follow control flow: a register holds at most the
 * largest value any instruction writes to it, and every function is counted
 * on every row visit. That over-estimates, never under-estimates (a string
 * aggregate's result is counted at its input's size: over all groups it
 * cannot produce more than its rows hold).
 */

/** SQLITE_LIMIT_LENGTH in workerd: no value is larger. */
export const MAX_VALUE_BYTES = 4 * 1024 * 1024;
/** Bytes of string work that cost about as much as one row visit. */
const BYTES_PER_VISIT = 64;
/** A function call or concatenation on short values, in row visits. */
const CALL_WEIGHT = 0.25;
/** Registers a variadic call may read (SQLITE_LIMIT_FUNCTION_ARG in workerd). */
const MAX_ARGS = 127;
const SMALL = 24;

export type Instruction = { opcode: string; p1: number; p2: number; p3: number; p4: string | null; p5: number };

export interface ValueSources {
  /** Longest value (bytes) of column `column` of the table at root page `rootpage`; null when it is not a user table. */
  columnBytes(rootpage: number, column: number): number | null;
  /** The most arguments a call of this (variadic) function has in the statement, if it appears there. */
  arity(name: string): number | undefined;
}

/** Aggregates whose value grows with every row: as window functions each row's value can span the whole frame. */
const STRING_AGGREGATES = new Set(["group_concat", "string_agg", "json_group_array", "json_group_object", "jsonb_group_array", "jsonb_group_object"]);
/** Functions whose result is no longer than their longest argument. */
const NO_LONGER = new Set([
  "upper", "lower", "trim", "ltrim", "rtrim", "substr", "substring", "coalesce", "ifnull", "nullif", "iif", "if", "min", "max",
  "likely", "unlikely", "likelihood", "json_extract", "->", "->>", "unhex", "cast", "abs", "round", "sum", "total", "avg",
  "first_value", "last_value", "nth_value", "lag", "lead",
]);
/** Functions whose result is a number or a short value whatever their arguments. */
const SHORT = new Set([
  "length", "octet_length", "instr", "unicode", "typeof", "like", "glob", "count", "random", "sign", "soundex", "date", "time",
  "datetime", "julianday", "unixepoch", "timediff", "json_valid", "json_type", "json_array_length", "row_number", "rank",
  "dense_rank", "percent_rank", "cume_dist", "ntile", "changes", "total_changes", "last_insert_rowid", "ceil", "ceiling",
  "floor", "trunc", "ln", "log", "log10", "log2", "exp", "pow", "power", "sqrt", "mod", "pi", "sin", "cos", "tan", "asin",
  "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "degrees", "radians",
]);

export class RowCostError extends Error {}

function fn(p4: string | null): { name: string; args: number } {
  const m = /^([^()]+)\((-?\d+)\)$/.exec(p4 ?? "");
  return m ? { name: m[1].toLowerCase(), args: Number(m[2]) } : { name: (p4 ?? "?").toLowerCase(), args: -1 };
}

/** The widths and precisions of a printf format, summed; null when one comes from an argument (`*`). */
function formatWidths(format: string): number | null {
  let total = format.length;
  for (const m of format.matchAll(/%[-+ #0,!]*(\*|\d+)?(?:\.(\*|\d+))?/g)) {
    if (m[1] === "*" || m[2] === "*") return null;
    total += Number(m[1] ?? 0) + Number(m[2] ?? 0);
  }
  return total;
}

class Registers {
  readonly size = new Map<number, number>();
  /** Literal strings a register is loaded with (a printf format). */
  readonly literals = new Map<number, string[]>();
  changed = false;

  get(r: number): number {
    return this.size.get(r) ?? SMALL;
  }

  set(r: number, bytes: number): void {
    const v = Math.min(MAX_VALUE_BYTES, Math.max(SMALL, Math.ceil(bytes)));
    if (v > (this.size.get(r) ?? 0)) {
      this.size.set(r, v);
      this.changed = true;
    }
  }

  sum(first: number, count: number): number {
    let n = 0;
    for (let i = 0; i < count; i++) n += this.get(first + i);
    return n;
  }

  max(first: number, count: number): number {
    let n = SMALL;
    for (let i = 0; i < count; i++) n = Math.max(n, this.get(first + i));
    return n;
  }
}

/** The largest value a function call can return, from its arguments' bounds. */
function callResult(op: Instruction, regs: Registers, sources: ValueSources): number {
  const { name, args } = fn(op.p4);
  // An aggregate step names its argument count in P5; a variadic call has at most as many as the text gives it.
  const n = args >= 0 ? args : op.opcode === "AggStep" ? op.p5 : Math.min(MAX_ARGS, sources.arity(name) ?? MAX_ARGS);
  if (SHORT.has(name)) return SMALL;
  if (NO_LONGER.has(name)) return regs.max(op.p2, n);
  switch (name) {
    case "replace":
      return regs.get(op.p2) * Math.max(1, regs.get(op.p2 + 2));
    case "printf":
    case "format": {
      const formats = regs.literals.get(op.p2);
      const widths = formats?.map(formatWidths);
      if (!widths?.length || widths.some((w) => w === null)) return MAX_VALUE_BYTES;
      return regs.sum(op.p2 + 1, n - 1) + Math.max(...(widths as number[]));
    }
    case "hex":
    case "quote":
      return 2 * regs.get(op.p2) + 2;
    case "char":
      return 4 * n;
    case "concat":
    case "concat_ws":
      return 2 * regs.sum(op.p2, n);
    case "group_concat":
    case "string_agg":
      return regs.sum(op.p2, Math.max(1, n));
    default:
      // JSON builders and anything else: escaping may double what they are given.
      return 2 * regs.sum(op.p2, n) + 64;
  }
}

/** Bounds every register, repeating until nothing grows (values flow through copies, records and loops). */
function boundRegisters(program: Instruction[], sources: ValueSources): Registers {
  const regs = new Registers();
  const tableCursor = new Map<number, number>();
  for (const op of program) {
    if (op.opcode === "OpenRead" || op.opcode === "ReopenIdx") tableCursor.set(op.p1, op.p2);
    if (op.opcode === "String8" || op.opcode === "String") regs.literals.set(op.p2, [...(regs.literals.get(op.p2) ?? []), op.p4 ?? ""]);
  }
  let recordField = SMALL;
  for (let pass = 0; pass < 50; pass++) {
    regs.changed = false;
    for (const op of program) {
      switch (op.opcode) {
        case "String8":
        case "String":
          regs.set(op.p2, new TextEncoder().encode(op.p4 ?? "").length);
          break;
        case "Blob":
          regs.set(op.p2, op.p1);
          break;
        case "Column": {
          const root = tableCursor.get(op.p1);
          const bytes = root === undefined ? null : sources.columnBytes(root, op.p2);
          regs.set(op.p3, bytes ?? recordField);
          break;
        }
        case "Copy":
        case "Move":
          for (let i = 0; i < Math.max(1, op.p3 + (op.opcode === "Copy" ? 1 : 0)); i++) regs.set(op.p2 + i, regs.get(op.p1 + i));
          break;
        case "SCopy":
        case "IntCopy":
          regs.set(op.p2, regs.get(op.p1));
          break;
        case "Concat":
          regs.set(op.p3, regs.get(op.p1) + regs.get(op.p2));
          break;
        case "Function":
        case "PureFunc":
          regs.set(op.p3, callResult(op, regs, sources));
          break;
        case "AggStep":
          // The accumulator (P3): a string aggregate's result counted at its input's size (see above).
          regs.set(op.p3, callResult(op, regs, sources));
          break;
        case "MakeRecord": {
          const widest = regs.max(op.p1, op.p2);
          if (widest > recordField) [recordField, regs.changed] = [widest, true];
          regs.set(op.p3, regs.sum(op.p1, op.p2));
          break;
        }
      }
    }
    if (!regs.changed) break;
  }
  return regs;
}

/**
 * Row visits one visit is worth (1 when its expressions are cheap), or
 * RowCostError for a construct whose per-row cost has no useful bound.
 */
export function rowWeight(program: Instruction[], sources: ValueSources): number {
  for (const op of program) {
    if ((op.opcode === "AggValue" || op.opcode === "AggInverse") && STRING_AGGREGATES.has(fn(op.p4).name)) {
      throw new RowCostError(
        `${fn(op.p4).name} cannot be used as a window function: each row's value could hold the whole window; aggregate with GROUP BY instead`,
      );
    }
  }
  const calls = program.filter((op) => op.opcode === "Function" || op.opcode === "PureFunc" || op.opcode === "AggStep" || op.opcode === "Concat");
  if (!calls.length) return 1;
  const regs = boundRegisters(program, sources);
  // Every call costs a fraction of a visit; a long result costs its length.
  let bytes = 0;
  for (const op of calls) bytes += Math.max(0, (op.opcode === "Concat" ? regs.get(op.p3) : callResult(op, regs, sources)) - BYTES_PER_VISIT);
  return 1 + calls.length * CALL_WEIGHT + bytes / BYTES_PER_VISIT;
}

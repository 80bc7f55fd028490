/**
 * An upper bound on the rows a query visits, read off SQLite's query plan
 * (EXPLAIN QUERY PLAN) before it runs. SQLite inside a Durable Object cannot
 * be interrupted from outside (and in an aggregate no row comes back to check
 * the clock at), so a statement runs only when its plan is bounded and the
 * bound is small enough to finish well inside the time limit.
 *
 * The bound is conservative: every loop visits at most its source's rows (a
 * table's row count, a subquery's or CTE's bounded output), nested loops
 * multiply, a correlated subquery runs once per combination of the loops
 * around it, a lookup through an automatic index visits at most the most
 * frequent value's rows. A step it does not recognise, or a recursive CTE,
 * makes the plan unbounded: refused, with the reason.
 */

export interface PlanStep {
  id: number;
  parent: number;
  detail: string;
}

/** What the bound needs to know about the store's tables. */
export interface PlanSources {
  /** The user tables a name in the plan may stand for (the table itself, or the tables an alias is given to). */
  targets(name: string): string[];
  /** Rows of a user table. */
  rows(table: string): number;
  /** Rows sharing the most frequent value of `column` in `table` (an equality lookup's worst case). */
  maxFrequency(table: string, column: string): number;
  /** Rows of the largest user table: the bound of a source that cannot be told apart. */
  largestTable(): number;
}

export class UnboundedPlanError extends Error {}

interface Bound {
  /** Row visits, sorts and index builds, all of it. */
  work: number;
  /** Rows it can produce. */
  out: number;
}

const COMPOUND_PART = /^(LEFT|RIGHT|LEFT-MOST SUBQUERY|UNION ALL|(UNION|EXCEPT|INTERSECT) USING TEMP B-TREE)$/;

export class PlanBound {
  private readonly children = new Map<number, PlanStep[]>();
  /** Bounded outputs of subqueries and CTEs (MATERIALIZE / CO-ROUTINE), by the name the plan gives them. */
  private readonly subqueries = new Map<string, number>();

  /**
   * `outerLimit`: the LIMIT the store wraps every statement in. When the plan's
   * top is only that wrapper reading the statement as a co-routine, it pulls at
   * most that many rows from it.
   */
  constructor(
    steps: PlanStep[],
    private readonly sources: PlanSources,
    private readonly outerLimit = Infinity,
  ) {
    for (const s of steps) {
      const list = this.children.get(s.parent) ?? [];
      list.push(s);
      this.children.set(s.parent, list);
    }
  }

  /** The bound of the whole statement, or UnboundedPlanError with the reason. */
  total(): Bound {
    const top = this.kids(0);
    const wrapper = top.length === 2 && /^CO-ROUTINE (.+)$/.exec(top[0].detail)?.[1];
    if (wrapper && top[1].detail === `SCAN ${wrapper}`) {
      const inner = this.level(top[0].id);
      const pulled = Math.min(inner.out, this.outerLimit);
      return { work: inner.work + pulled, out: pulled };
    }
    return this.level(0);
  }

  private kids(id: number): PlanStep[] {
    return this.children.get(id) ?? [];
  }

  /** One SELECT's steps (siblings): its loops nest in order; the rest runs once or per combination of the loops. */
  private level(parent: number): Bound {
    const loops: number[] = [];
    let work = 0;
    let perCombination = 0;
    let compound: number | null = null;
    let sorts = 0;
    for (const step of this.kids(parent)) {
      const d = step.detail;
      let m: RegExpExecArray | null;
      if (d === "SETUP" || d === "RECURSIVE STEP") {
        throw new UnboundedPlanError("Recursive queries (WITH RECURSIVE) are not allowed: how long they run cannot be known before they run");
      } else if ((m = /^(?:MATERIALIZE|CO-ROUTINE) (.+)$/.exec(d))) {
        const sub = this.level(step.id);
        this.subqueries.set(m[1], Math.max(this.subqueries.get(m[1]) ?? 0, sub.out));
        work += sub.work;
      } else if ((m = /^(CORRELATED )?(?:SCALAR|LIST) SUBQUERY \d+$/.exec(d))) {
        const sub = this.level(step.id);
        if (m[1]) perCombination += sub.work;
        else work += sub.work;
      } else if (/^(?:SCAN|SEARCH) /.test(d)) {
        const loop = this.loop(d);
        loops.push(loop.rows);
        work += loop.setup;
      } else if (d === "MULTI-INDEX OR") {
        let rows = 0;
        for (const index of this.kids(step.id)) for (const s of this.kids(index.id)) rows += this.loop(s.detail).rows;
        loops.push(rows);
      } else if (d === "COMPOUND QUERY" || /^MERGE \((UNION|UNION ALL|EXCEPT|INTERSECT)\)$/.test(d)) {
        compound = 0;
        for (const part of this.kids(step.id)) {
          if (!COMPOUND_PART.test(part.detail)) throw unknownStep(part.detail);
          const b = this.level(part.id);
          work += b.work;
          compound += b.out;
        }
      } else if (/^RIGHT-JOIN /.test(d)) {
        work += this.level(step.id).work;
      } else if ((m = /^(?:CREATE )?BLOOM FILTER(?: ON (\S+))?/.exec(d))) {
        work += m[1] ? this.rowsOf(m[1]) : 0;
      } else if (/^USE TEMP B-TREE FOR /.test(d)) {
        sorts++;
      } else {
        throw unknownStep(d);
      }
    }
    let combinations = 1;
    for (const rows of loops) {
      combinations *= Math.max(1, rows);
      work += combinations;
    }
    work += combinations * perCombination;
    const out = compound ?? combinations;
    work += sorts * out;
    return { work, out };
  }

  /** A SCAN or SEARCH step: rows visited per run, and the one-off cost of an automatic index it builds. */
  private loop(detail: string): { rows: number; setup: number } {
    const m = /^(?:SCAN|SEARCH) (\(subquery-\d+\)|\S+)(.*)$/.exec(detail);
    if (!m) throw unknownStep(detail);
    const [, name, rest] = m;
    const constant = /^(\d+)-ROW VALUES CLAUSE$/.exec(`${name}${rest}`.replace(/^SCAN /, ""));
    if (name === "CONSTANT" && rest === " ROW") return { rows: 1, setup: 0 };
    if (constant) return { rows: Number(constant[1]), setup: 0 };
    if (/VIRTUAL TABLE/.test(rest)) throw new UnboundedPlanError("Virtual tables and table-valued functions are not available");
    const rows = this.rowsOf(name);
    if (/INTEGER PRIMARY KEY \(rowid=\?\)/.test(rest)) return { rows: Math.min(rows, 1), setup: 0 };
    const auto = /AUTOMATIC (?:PARTIAL )?(?:COVERING )?INDEX \((\w+)=\?/.exec(rest);
    if (auto && !/COLLATE/i.test(rest)) {
      // A lookup by key visits at most the most frequent key's rows, when the source is surely that one table.
      const targets = this.sources.targets(name);
      const table = targets.length === 1 && !this.subqueries.has(name) && !this.subqueries.has(targets[0]) ? targets[0] : null;
      return { rows: table ? this.sources.maxFrequency(table, auto[1]) : rows, setup: rows };
    }
    return { rows, setup: auto ? rows : 0 };
  }

  /**
   * Rows of what a plan step names, the most of everything it may be: a subquery or CTE bounded earlier,
   * a table, a CTE named like a table, the tables an alias is given to; unknown, the largest of them all.
   */
  private rowsOf(name: string): number {
    const found: number[] = [];
    const sub = this.subqueries.get(name);
    if (sub !== undefined) found.push(sub);
    for (const t of this.sources.targets(name)) found.push(this.sources.rows(t), this.subqueries.get(t) ?? 0);
    if (found.length) return Math.max(...found);
    return Math.max(this.sources.largestTable(), ...this.subqueries.values());
  }
}

const unknownStep = (detail: string) =>
  new UnboundedPlanError(`The query's plan has a step whose cost cannot be bounded before it runs (${detail.slice(0, 120)}); write it as joins, subqueries and aggregates over the tables`);

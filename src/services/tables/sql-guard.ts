/**
 * The first, textual gate of POST /sql (the database is the second and
 * deciding one, see store.ts `query`): the statement must be one SELECT /
 * WITH / VALUES statement of at most 10,000 characters. A small SQL lexer
 * (strings, quoted identifiers, comments) finds the first keyword and any `;`
 * followed by more SQL, so the reasons it gives are precise; it is not what
 * makes the query read-only.
 */

export const MAX_SQL_CHARS = 10_000;

export type SqlCheck = { ok: true; body: string } | { ok: false; message: string };

/** Index just past the token starting at `i` of a quoted literal/identifier or comment, or -1 when unterminated. */
function skipQuoted(s: string, i: number): number {
  const open = s[i];
  const close = open === "[" ? "]" : open;
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === close) {
      if (close !== "]" && s[j + 1] === close) j++;
      else return j + 1;
    }
  }
  return -1;
}

export function checkSqlText(sql: string): SqlCheck {
  if (sql.length > MAX_SQL_CHARS) return { ok: false, message: `The query is ${sql.length} characters long; at most ${MAX_SQL_CHARS} are allowed` };
  let firstWord: string | null = null;
  let end = -1; // position of a terminating ';'
  for (let i = 0; i < sql.length; ) {
    const ch = sql[i];
    if (ch === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i);
      i = nl === -1 ? sql.length : nl + 1;
    } else if (ch === "/" && sql[i + 1] === "*") {
      const close = sql.indexOf("*/", i + 2);
      if (close === -1) return { ok: false, message: "Unterminated /* comment" };
      i = close + 2;
    } else if (ch === "'" || ch === '"' || ch === "`" || ch === "[") {
      if (end !== -1) return several(end);
      const next = skipQuoted(sql, i);
      if (next === -1) return { ok: false, message: `Unterminated ${ch === "'" ? "string" : "quoted name"} starting at position ${i}` };
      i = next;
    } else if (ch === ";") {
      if (end === -1) end = i;
      i++;
    } else if (/\s/.test(ch)) i++;
    else {
      if (end !== -1) return several(end);
      if (firstWord === null && /[A-Za-z]/.test(ch)) firstWord = /^[A-Za-z]+/.exec(sql.slice(i, i + 20))![0].toUpperCase();
      if (firstWord === null && ch !== "(") return { ok: false, message: `The query must start with SELECT or WITH (found '${ch}')` };
      i++;
    }
  }
  if (firstWord === null) return { ok: false, message: "The query is empty" };
  if (!["SELECT", "WITH", "VALUES"].includes(firstWord)) {
    return { ok: false, message: `Only a read-only SELECT or WITH statement is allowed; this is a ${firstWord} statement` };
  }
  return { ok: true, body: end === -1 ? sql : sql.slice(0, end) };
}

const several = (at: number): SqlCheck => ({
  ok: false,
  message: `Only one statement is allowed: there is more SQL after the ';' at position ${at}`,
});

/**
 * The most arguments any call of each function in `sql` has, by lower-case
 * name (`printf('%s %s', a, b)` -> printf: 3): the compiled program does not
 * say how many registers a variadic function reads (row-cost.ts).
 */
export function callArities(sql: string): Map<string, number> {
  const out = new Map<string, number>();
  const calls: Array<{ name: string; depth: number; args: number }> = [];
  let depth = 0;
  let word = "";
  for (let i = 0; i < sql.length; ) {
    const ch = sql[i];
    if (ch === "'" || ch === '"' || ch === "`" || ch === "[") {
      const next = skipQuoted(sql, i);
      if (next === -1) break;
      word = ch === "'" ? "" : sql.slice(i + 1, next - 1).toLowerCase();
      i = next;
      continue;
    }
    if (/[A-Za-z0-9_$]/.test(ch)) {
      let j = i;
      while (j < sql.length && /[A-Za-z0-9_$]/.test(sql[j])) j++;
      word = sql.slice(i, j).toLowerCase();
      i = j;
      continue;
    }
    if (ch === "(") {
      depth++;
      if (word) calls.push({ name: word, depth, args: /^\s*\)/.test(sql.slice(i + 1, i + 40)) ? 0 : 1 });
    } else if (ch === ")") {
      const top = calls[calls.length - 1];
      if (top?.depth === depth) {
        calls.pop();
        out.set(top.name, Math.max(out.get(top.name) ?? 0, top.args));
      }
      depth--;
    } else if (ch === ",") {
      const top = calls[calls.length - 1];
      if (top?.depth === depth) top.args++;
    }
    if (!/\s/.test(ch)) word = "";
    i++;
  }
  return out;
}

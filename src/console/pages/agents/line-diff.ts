/** One line of a diff: kept, removed (only in the older text) or added (only in the newer). */
export interface DiffLine {
  kind: "same" | "removed" | "added";
  text: string;
}

/**
 * A line diff by longest common subsequence (agent configurations are small: at most a few hundred lines).
 * Lines present in both texts are "same"; the rest are "removed" (from `a`) or "added" (in `b`), in order.
 */
export function diffLines(a: string, b: string): DiffLine[] {
  const x = a.split("\n");
  const y = b.split("\n");
  const n = x.length;
  const m = y.length;
  // lcs[i][j]: length of the common subsequence of x[i..] and y[j..].
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ kind: "same", text: x[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ kind: "removed", text: x[i++] });
    else out.push({ kind: "added", text: y[j++] });
  }
  while (i < n) out.push({ kind: "removed", text: x[i++] });
  while (j < m) out.push({ kind: "added", text: y[j++] });
  return out;
}

/** A configuration as stable, readable lines: keys in a fixed order, long texts split into their own lines. */
export function configText(config: Record<string, unknown>): string {
  const lines: string[] = [];
  for (const key of Object.keys(config).sort()) {
    const v = config[key];
    if (typeof v === "string" && v.includes("\n")) {
      lines.push(`${key}:`);
      for (const l of v.split("\n")) lines.push(`  ${l}`);
    } else lines.push(`${key}: ${JSON.stringify(v)}`);
  }
  return lines.join("\n");
}

/**
 * Charts of query results: the model asks with a few flat arguments of
 * sql__query (`chart`: the mark, `x`, `y`, optional `color` and
 * `chart_title`, naming result columns) and gets a validated Vega-Lite v5
 * specification whose data are the result rows inline (no URL, no transform
 * the client would have to trust). Flat arguments, not a nested object: every
 * tool-calling model fills those reliably.
 */

export const CHART_MARKS = ["bar", "line", "point", "area", "arc"] as const;
export type ChartMark = (typeof CHART_MARKS)[number];
/** Rows a chart carries inline at most. */
export const CHART_MAX_ROWS = 500;
export const VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json";

export interface ChartRequest {
  mark: ChartMark;
  x: string;
  y: string;
  color?: string;
  title?: string;
}

/** The chart arguments of sql__query's input schema. */
export const CHART_INPUT_PROPERTIES = {
  chart: { type: "string", enum: [...CHART_MARKS], description: "Draw the result for the user: bar, line, point, area, or arc (a pie). Needs x and y." },
  x: { type: "string", description: "Chart: result column for the x axis (the pie's categories)" },
  y: { type: "string", description: "Chart: result column of numbers for the y axis (the pie's values)" },
  color: { type: "string", description: "Chart: optional result column for colour (one series per value)" },
  chart_title: { type: "string", maxLength: 120, description: "Chart: optional title" },
} as const;

/** The chart request in a tool input, or null when none was asked for. */
export function chartRequest(input: Record<string, unknown>): Record<string, unknown> | null {
  if (input.chart === undefined || input.chart === null || input.chart === "") return null;
  return { mark: input.chart, x: input.x, y: input.y, color: input.color, title: input.chart_title };
}

type FieldType = "quantitative" | "temporal" | "nominal";

function fieldType(values: unknown[]): FieldType {
  const present = values.filter((v) => v !== null && v !== undefined);
  if (present.length && present.every((v) => typeof v === "number")) return "quantitative";
  if (present.length && present.every((v) => typeof v === "string" && /^\d{4}-\d{2}(-\d{2}([T ][\d:]+Z?)?)?$/.test(v))) return "temporal";
  return "nominal";
}

export type ChartOutcome = { ok: true; spec: Record<string, unknown> } | { ok: false; reason: string };

/** A Vega-Lite v5 spec for `req` over the result, or why it cannot be drawn. */
export function buildChart(raw: unknown, columns: string[], rows: unknown[][]): ChartOutcome {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, reason: "no chart was asked for" };
  const req = raw as Record<string, unknown>;
  const mark = req.mark;
  if (typeof mark !== "string" || !(CHART_MARKS as readonly string[]).includes(mark)) return { ok: false, reason: `chart must be one of ${CHART_MARKS.join(", ")}` };
  const col = (key: "x" | "y" | "color") => {
    const v = req[key];
    if ((v === undefined || v === null || v === "") && key === "color") return { ok: true as const, index: -1 };
    if (typeof v !== "string" || !columns.includes(v)) return { ok: false as const, reason: `${key} must name a result column (${columns.join(", ")})` };
    return { ok: true as const, index: columns.indexOf(v) };
  };
  const x = col("x");
  const y = col("y");
  const color = col("color");
  for (const c of [x, y, color]) if (!c.ok) return { ok: false, reason: c.reason };
  if (!x.ok || !y.ok || !color.ok) return { ok: false, reason: "invalid chart" };
  if (!rows.length) return { ok: false, reason: "the query returned no rows to chart" };
  const data = rows.slice(0, CHART_MAX_ROWS);
  const yType = fieldType(data.map((r) => r[y.index]));
  if (yType !== "quantitative") return { ok: false, reason: `y (${columns[y.index]}) must be a column of numbers` };
  const values = data.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
  const xName = columns[x.index];
  const yName = columns[y.index];
  const title = typeof req.title === "string" && req.title.trim() ? req.title.trim().slice(0, 120) : undefined;
  const encoding: Record<string, unknown> =
    mark === "arc"
      ? { theta: { field: yName, type: "quantitative" }, color: { field: xName, type: "nominal" } }
      : {
          x: { field: xName, type: fieldType(data.map((r) => r[x.index])), ...(mark === "bar" ? { sort: null } : {}) },
          y: { field: yName, type: "quantitative" },
          ...(color.index >= 0 ? { color: { field: columns[color.index], type: "nominal" } } : {}),
        };
  return {
    ok: true,
    spec: {
      $schema: VEGA_LITE_SCHEMA,
      ...(title ? { title } : {}),
      data: { values },
      mark: { type: mark, tooltip: true },
      encoding,
    },
  };
}

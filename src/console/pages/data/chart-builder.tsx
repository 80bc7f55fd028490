import { useMemo, useState } from "react";
import { buildChart, CHART_MARKS } from "../../../services/tables/chart";
import { Chart } from "../../ui/chart";
import { Field, Select } from "../../ui/ui";

const MARK_LABELS: Record<(typeof CHART_MARKS)[number], string> = { bar: "Bars", line: "Line", point: "Points", area: "Area", arc: "Pie" };

/**
 * A chart of a query result: the mark and the columns picked here go through the same code the chat's
 * `sql__query` tool uses (buildChart), so the spec is the one a chat turn would emit for the same request.
 */
export function ChartBuilder({ columns, rows }: { columns: string[]; rows: (string | number | null)[][] }) {
  const numeric = columns.filter((_, i) => rows.some((r) => typeof r[i] === "number"));
  const [mark, setMark] = useState<string>("bar");
  const [x, setX] = useState(columns.find((c) => !numeric.includes(c)) ?? columns[0] ?? "");
  const [y, setY] = useState(numeric.at(-1) ?? columns[1] ?? "");
  const [color, setColor] = useState("");
  const [title, setTitle] = useState("");
  const outcome = useMemo(() => buildChart({ mark, x, y, color: color || undefined, title }, columns, rows), [mark, x, y, color, title, columns, rows]);
  const opts = columns.map((c) => ({ value: c, label: c }));
  return (
    <section className="card" aria-labelledby="chart-heading">
      <h2 id="chart-heading">Chart</h2>
      <div className="inline-form">
        <Select label="Chart type" value={mark} onChange={(e) => setMark(e.target.value)} options={CHART_MARKS.map((m) => ({ value: m, label: MARK_LABELS[m] }))} />
        <Select label={mark === "arc" ? "Categories" : "X axis"} value={x} onChange={(e) => setX(e.target.value)} options={opts} />
        <Select label={mark === "arc" ? "Values" : "Y axis (numbers)"} value={y} onChange={(e) => setY(e.target.value)} options={opts} />
        <Select label="Colour by" value={color} onChange={(e) => setColor(e.target.value)} options={[{ value: "", label: "Nothing" }, ...opts]} />
        <Field label="Title" value={title} maxLength={120} onChange={(e) => setTitle(e.target.value)} />
      </div>
      {outcome.ok ? <Chart spec={outcome.spec} label={title || `${MARK_LABELS[mark as keyof typeof MARK_LABELS]} of ${y} by ${x}`} /> : <p className="note" role="status">No chart: {outcome.reason}.</p>}
    </section>
  );
}

import embed, { type Result, type VisualizationSpec } from "vega-embed";
import { expressionInterpreter } from "vega-interpreter";

/**
 * vega-embed, loaded only when a chart is drawn (its own chunk: the console's first load stays small).
 * The console's CSP has no 'unsafe-eval', so Vega evaluates expressions with its interpreter (ast: true), and
 * no inline styles, so vega-embed adds no <style> of its own; SVG, so the chart is part of the page's text.
 */
export function drawChart(el: HTMLElement, spec: Record<string, unknown>): Promise<Result> {
  // The spec says what to draw; the size is the page's: as wide as the space (a pie stays round).
  const room = Math.max(220, Math.min(el.clientWidth - 90, 760));
  const pie = (spec.mark as { type?: string } | undefined)?.type === "arc";
  const sized = { width: pie ? Math.min(room, 260) : room, height: pie ? Math.min(room, 260) : 240, ...spec };
  return embed(el, sized as VisualizationSpec, {
    ast: true,
    expr: expressionInterpreter,
    renderer: "svg",
    actions: false,
    defaultStyle: false,
    tooltip: false,
    logLevel: 0,
  });
}

import { useEffect, useRef, useState } from "react";

/** Title of a Vega-Lite spec, for the figure's accessible name. */
function titleOf(spec: Record<string, unknown>): string | undefined {
  const t = spec.title;
  return typeof t === "string" ? t : undefined;
}

/**
 * A chart drawn from a Vega-Lite spec (the one the chat's `chart` event carries, or one built by the same code
 * from a query result), with the data as a table for screen readers and anyone who prefers numbers.
 */
export function Chart({ spec, label }: { spec: Record<string, unknown>; label?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [drawn, setDrawn] = useState(false);
  // Drawn again when its space changes much (a window resized, a phone turned): charts fit the page.
  const [room, setRoom] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setRoom(Math.round(el.clientWidth / 80)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useEffect(() => {
    if (!room) return;
    let finalize: (() => void) | undefined;
    let cancelled = false;
    setError(null);
    setDrawn(false);
    import("./vega")
      .then(({ drawChart }) => (ref.current ? drawChart(ref.current, spec) : null))
      .then((r) => {
        if (!r) return;
        if (cancelled) return r.finalize();
        finalize = r.finalize;
        setDrawn(true);
      })
      .catch((e: unknown) => !cancelled && setError(`The chart could not be drawn: ${e instanceof Error ? e.message : String(e)}`));
    return () => {
      cancelled = true;
      finalize?.();
    };
  }, [spec, room]);
  const name = label ?? titleOf(spec) ?? "Chart";
  return (
    <figure className="chart" aria-label={name} data-drawn={drawn || undefined}>
      <div ref={ref} className="chart-canvas" />
      {!drawn && !error && <p className="muted">Drawing the chart…</p>}
      {error && <p className="note note-error" role="alert">{error}</p>}
    </figure>
  );
}

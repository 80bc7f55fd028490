import type { ReactNode } from "react";

/** A table that may scroll sideways on a phone: a named region reachable by keyboard (to scroll it). */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

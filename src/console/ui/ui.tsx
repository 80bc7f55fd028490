import { useEffect, useId, useRef, useState, type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from "react";
import { ApiError, messageOf } from "../api/client";

/** Accessible primitives: native elements, a visible label for every field, errors announced in words. */

type Variant = "primary" | "secondary" | "danger" | "ghost";

export function Button({ variant = "secondary", busy, children, ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; busy?: boolean }) {
  return (
    <button type="button" {...rest} className={`btn btn-${variant} ${rest.className ?? ""}`} disabled={rest.disabled || busy} aria-busy={busy || undefined}>
      {children}
    </button>
  );
}

interface FieldProps {
  label: string;
  hint?: ReactNode;
}

export function Field({ label, hint, ...rest }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...rest} />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

export function TextArea({ label, hint, ...rest }: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} aria-describedby={hint ? `${id}-hint` : undefined} rows={4} {...rest} />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

export function Select({ label, hint, options, ...rest }: FieldProps & SelectHTMLAttributes<HTMLSelectElement> & { options: { value: string; label: string }[] }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} {...rest}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {hint && <small>{hint}</small>}
    </div>
  );
}

/** A refusal or failure, in the API's words. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const requestId = error instanceof ApiError ? error.requestId : undefined;
  // The API's details name each field that was wrong (e.g. every refused origin), when it sends them.
  const details = error instanceof ApiError ? error.details.filter((d) => d.message !== messageOf(error)) : [];
  return (
    <div className="note note-error" role="alert">
      {messageOf(error)}
      {requestId && <small className="request-id"> (request {requestId})</small>}
      {details.length > 0 && (
        <ul className="error-details">
          {details.map((d, i) => (
            <li key={i}>{d.path ? <><code>{d.path}</code>: </> : null}{d.message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="note" role="status">
      {children}
    </p>
  );
}

/** What to do next when a list is empty. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children}
    </div>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p className="muted" role="status">
      {what}…
    </p>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} — Console`;
  }, [title]);
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {children && <div className="page-actions">{children}</div>}
    </header>
  );
}

export function Badge({ tone = "neutral", children }: { tone?: "neutral" | "good" | "bad" | "busy"; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard refused (insecure origin): select the text for the user instead.
      const ta = document.createElement("textarea");
      ta.value = text;
      document.body.append(ta);
      ta.select();
      document.execCommand("copy");
      ta.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 2000);
  };
  return (
    <Button onClick={copy} aria-live="polite">
      {done ? "Copied" : label}
    </Button>
  );
}

/** A modal dialog (native <dialog>: focus trap, Escape, backdrop). */
export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <Button variant="ghost" onClick={onClose} aria-label="Close">
          ×
        </Button>
      </div>
      {open && children}
    </dialog>
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function confirmed(question: string): boolean {
  return window.confirm(question);
}

/** Pages of a list the API returns a page at a time (`total`, `limit`, `offset`). */
export function Pager({ total, limit, offset, onChange, what }: { total: number; limit: number; offset: number; onChange: (offset: number) => void; what: string }) {
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <nav className="pager row" aria-label={`Pages of ${what}`}>
      <span className="muted">
        {offset + 1}–{last} of {total} {what}
      </span>
      <Button onClick={() => onChange(Math.max(0, offset - limit))} disabled={offset === 0}>
        Previous
      </Button>
      <Button onClick={() => onChange(offset + limit)} disabled={last >= total}>
        Next
      </Button>
    </nav>
  );
}

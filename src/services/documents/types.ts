/**
 * Accepted document types (API-DECISIONS.md, "Knowledge bases and documents"):
 * the kind decides the parser. Binary kinds get a derived text companion.
 */
export const DOCUMENT_KINDS = {
  pdf: { mimes: ["application/pdf"], exts: ["pdf"], binary: true },
  docx: { mimes: ["application/vnd.openxmlformats-officedocument.wordprocessingml.document"], exts: ["docx"], binary: true },
  xlsx: { mimes: ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"], exts: ["xlsx"], binary: true },
  pptx: { mimes: ["application/vnd.openxmlformats-officedocument.presentationml.presentation"], exts: ["pptx"], binary: true },
  html: { mimes: ["text/html", "application/xhtml+xml"], exts: ["html", "htm", "xhtml"], binary: false },
  markdown: { mimes: ["text/markdown", "text/x-markdown"], exts: ["md", "markdown"], binary: false },
  text: { mimes: ["text/plain"], exts: ["txt", "text", "log"], binary: false },
  csv: { mimes: ["text/csv", "application/csv"], exts: ["csv"], binary: false },
  json: { mimes: ["application/json", "text/json"], exts: ["json"], binary: false },
} as const;

export type DocumentKind = keyof typeof DOCUMENT_KINDS;

/** Sent by clients that do not know the type; the extension decides then. */
const GENERIC_MIMES = new Set(["application/octet-stream", "binary/octet-stream", "application/x-download"]);

export const ACCEPTED_MIME_TYPES = Object.values(DOCUMENT_KINDS).flatMap((k) => k.mimes);
export const ACCEPTED_EXTENSIONS = Object.values(DOCUMENT_KINDS).flatMap((k) => k.exts);

/** `Text/HTML; charset=utf-8` -> `text/html`. */
export function baseMime(mime: string): string {
  return mime.split(";")[0].trim().toLowerCase();
}

export function extensionOf(filename: string): string {
  const m = /\.([A-Za-z0-9]+)$/.exec(filename.trim());
  return m ? m[1].toLowerCase() : "";
}

/**
 * The kind of a file from its declared MIME type, with the extension as the
 * tie-breaker: `text/plain` named `notes.md` is Markdown, and a generic
 * `application/octet-stream` is decided by the extension. Null = not accepted.
 */
export function detectKind(mimeType: string, filename: string): DocumentKind | null {
  const mime = baseMime(mimeType);
  const ext = extensionOf(filename);
  const byExt = (Object.keys(DOCUMENT_KINDS) as DocumentKind[]).find((k) => (DOCUMENT_KINDS[k].exts as readonly string[]).includes(ext)) ?? null;
  if (GENERIC_MIMES.has(mime)) return byExt;
  const byMime = (Object.keys(DOCUMENT_KINDS) as DocumentKind[]).find((k) => (DOCUMENT_KINDS[k].mimes as readonly string[]).includes(mime)) ?? null;
  if (byMime === "text" && byExt && !DOCUMENT_KINDS[byExt].binary) return byExt;
  return byMime;
}

export const isBinaryKind = (kind: DocumentKind) => DOCUMENT_KINDS[kind].binary;

/**
 * A filename safe to use as the last segment of a storage key: no path
 * separators or control characters, ASCII only, bounded length.
 */
export function storageSafeName(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? "";
  const safe = base
    .normalize("NFKD")
    .replace(/[^\x20-\x7e]/g, "")
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/_+/g, "_")
    .replace(/^[._]+/, "")
    .slice(-120);
  return safe || "file";
}

/** Displayed filenames: trimmed, no control characters, at most 255 characters. */
export function cleanFilename(filename: string): string {
  // eslint-disable-next-line no-control-regex
  return filename.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, 255);
}

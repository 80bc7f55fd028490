import type { Database } from "../../db/client";
import type { DocumentRow, KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import { newId } from "../../lib/ids";
import { fetchFailed, guardedFetch, normalizeUserUrl } from "../../lib/url-guard";
import { assertQuotas, documentKey, insertDocument } from "../documents/documents";
import { baseMime, cleanFilename, detectKind, DOCUMENT_KINDS, extensionOf, type DocumentKind } from "../documents/types";
import { unsupportedType } from "../documents/uploads";
import { enqueueProcessing } from "../ingest/messages";

const ACCEPT = "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.8,text/plain;q=0.7,*/*;q=0.5";

/** Decodes HTML with the charset from the header or a <meta> tag (UTF-8 otherwise). */
export function decodeHtml(bytes: Uint8Array, contentType: string): string {
  const head = new TextDecoder().decode(bytes.subarray(0, 2048));
  const charset =
    /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? /<meta[^>]+charset=["']?([\w-]+)/i.exec(head)?.[1] ?? "utf-8";
  try {
    return new TextDecoder(charset.toLowerCase()).decode(bytes);
  } catch {
    return new TextDecoder().decode(bytes);
  }
}

function pageName(url: URL): string {
  return `${url.hostname}${url.pathname === "/" ? "" : decodeURIComponent(url.pathname).replace(/\/+$/, "")}`;
}

function fileNameFor(url: URL, kind: DocumentKind): string {
  const last = decodeURIComponent(url.pathname.split("/").filter(Boolean).pop() ?? "");
  const ext = DOCUMENT_KINDS[kind].exts[0];
  if (last && (DOCUMENT_KINDS[kind].exts as readonly string[]).includes(extensionOf(last))) return cleanFilename(last);
  return cleanFilename(`${(last || url.hostname).slice(0, 200)}.${ext}`);
}

/**
 * POST /documents/upload-url: fetches the page now (through the URL guard: 15 s,
 * 5 MB), keeps its readable content as Markdown (the page title becomes the
 * filename), stores it and queues processing. Other accepted file types found
 * at the URL (a PDF, a CSV, ...) are stored as they are.
 */
export async function ingestUrl(env: Env, db: Database, kb: KnowledgeBase, rawUrl: string, createdBy: string | null): Promise<DocumentRow> {
  const url = normalizeUserUrl(rawUrl);
  // Quotas first, as for uploads: no fetching on behalf of a tenant that is full.
  await assertQuotas(db, kb.tenantId, 1);
  const page = await guardedFetch(env, url, { accept: ACCEPT });
  const mime = baseMime(page.contentType || "application/octet-stream");

  let bytes: Uint8Array;
  let filename: string;
  let mimeType: string;
  if (mime === "text/html" || mime === "application/xhtml+xml" || (!page.contentType && /<html/i.test(new TextDecoder().decode(page.body.subarray(0, 512))))) {
    const { htmlToMarkdown } = await import("../parsing/html");
    const { title, markdown } = htmlToMarkdown(decodeHtml(page.body, page.contentType));
    if (!markdown.trim()) throw fetchFailed(`${page.url.toString()} has no readable content`);
    const heading = title ?? pageName(page.url);
    const body = markdown.startsWith("# ") ? markdown : `# ${heading}\n\n${markdown}`;
    bytes = new TextEncoder().encode(`${body}\n\nSource: ${page.url.toString()}\n`);
    filename = cleanFilename(`${heading.slice(0, 240)}.md`);
    mimeType = "text/markdown";
  } else {
    const kind = detectKind(mime, page.url.pathname);
    if (!kind) throw unsupportedType(mime, page.url.toString());
    if (!page.body.byteLength) throw fetchFailed(`${page.url.toString()} returned an empty body`);
    bytes = page.body;
    filename = fileNameFor(page.url, kind);
    mimeType = DOCUMENT_KINDS[kind].mimes[0];
  }

  const id = newId("doc");
  const key = documentKey(kb, id, filename);
  await env.BUCKET.put(key, bytes, { httpMetadata: { contentType: mimeType }, customMetadata: { document_id: id } });
  let doc: DocumentRow;
  try {
    doc = await insertDocument(db, { id, kb, filename, mimeType, sizeBytes: bytes.byteLength, status: "queued", sourceUrl: page.url.toString(), createdBy, key });
  } catch (e) {
    await env.BUCKET.delete(key);
    throw e;
  }
  await enqueueProcessing(env, doc);
  return doc;
}

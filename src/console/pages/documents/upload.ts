import { api, ApiError, unwrap } from "../../api/client";

export type Stage = "uploading" | "queued" | "processing" | "processed" | "failed";

export interface UploadItem {
  key: string;
  name: string;
  size: number;
  /** 0..1 of the bytes sent. */
  sent: number;
  documentId?: string;
  /** The document's status once its bytes are sent (polled until processed or failed). */
  status?: string;
  /** Why it failed: the upload refused, or the document's failure reason. */
  error?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Follows one document until it is processed or failed (GET /documents/status), once a second. */
async function follow(documentId: string, update: (patch: Partial<UploadItem>) => void): Promise<void> {
  for (;;) {
    const d = await unwrap(api.GET("/api/v1/documents/status", { params: { query: { document_id: documentId } } }));
    update({ status: d.status, error: d.status === "failed" ? (d.error ?? "Processing failed.") : undefined });
    if (d.status === "processed" || d.status === "failed" || d.status === "deleted") return;
    await sleep(1000);
  }
}

/** PUT to the signed URL with upload progress (fetch has none). */
function put(url: string, headers: Record<string, string>, file: File, onProgress: (f: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let message = `The upload was refused (HTTP ${xhr.status}).`;
      try {
        message = (JSON.parse(xhr.responseText) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        /* not JSON */
      }
      reject(new ApiError(xhr.status, "upload_failed", message));
    };
    xhr.onerror = () => reject(new ApiError(0, "network_error", "The upload was interrupted: the service could not be reached."));
    xhr.send(file);
  });
}

/**
 * presign (the API checks type, size and quotas) → PUT the bytes → the document is queued for processing;
 * `queued` calls back then (the list refreshes) and the document is followed until processed or failed.
 */
export async function uploadFile(kb: { id: string; tenant_id: string }, file: File, update: (patch: Partial<UploadItem>) => void, queued: () => void): Promise<void> {
  try {
    const p = await unwrap(
      api.POST("/api/v1/documents/presign", {
        body: { kb_id: kb.id, tenant_id: kb.tenant_id, filename: file.name, mime_type: file.type || "application/octet-stream", size_bytes: file.size },
      }),
    );
    update({ documentId: p.document_id });
    await put(p.upload_url, p.headers, file, (sent) => update({ sent }));
    update({ sent: 1, status: "queued" });
    queued();
    await follow(p.document_id, update);
  } catch (e) {
    update({ error: e instanceof Error ? e.message : String(e) });
  }
}

/** Runs `work` over items, `limit` at a time. */
export async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await work(next);
    }),
  );
}

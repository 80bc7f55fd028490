import { z } from "@hono/zod-openapi";
import { ErrorSchema, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { receiveUpload, serveSignedDownload } from "../../services/documents/uploads";
import { routesTagged } from "../define-route";

/**
 * The Worker-signed upload and download URLs handed out by presign and
 * download. They sit outside /api/v1 and take no credentials: the HMAC
 * signature in the query is the credential, for one document, one purpose and
 * 15 minutes.
 */

const route = routesTagged(["Documents"]);
const SignedQuery = z.object({
  expires: z.string().optional().openapi({ description: "Expiry, Unix seconds (part of the signature)" }),
  sig: z.string().optional().openapi({ description: "HMAC-SHA256 signature" }),
});
const err = (description: string) => ({ description, content: { "application/json": { schema: ErrorSchema } } });

export const signedUrlRoutes = createRouter();

const upload = route("put", "/uploads/{id}", "public", {
  operationId: "uploadDocumentBytes", summary: "Upload a document's bytes to its signed upload URL (from presign)",
  description:
    "Send the raw file with `Content-Type` as given at presign and a `Content-Length` equal to `size_bytes`. " +
    "Processing starts automatically; poll GET /api/v1/documents/status.",
  request: { query: SignedQuery },
  responses: {
    200: jsonContent(z.object({ document_id: z.string(), status: z.literal("queued") }), "Stored and queued for processing"),
    400: err("Size or Content-Type differs from the presign"),
    403: err("Missing, invalid or expired signature"),
    404: err("No such document"),
    409: err("Already uploaded, or the document was deleted"),
    413: err("Larger than MAX_UPLOAD_BYTES"),
  },
});
signedUrlRoutes.openapi(upload, async (c) => {
  const { id } = c.req.valid("param");
  const doc = await receiveUpload(c.env, c.get("db"), id, c.req.raw, c.req.valid("query"));
  return c.json({ document_id: doc.id, status: "queued" as const }, 200);
});

const download = route("get", "/downloads/{id}", "public", {
  operationId: "downloadDocumentBytes", summary: "Download a document's stored file through its signed download URL",
  request: { query: SignedQuery },
  responses: {
    200: { description: "The stored bytes, as an attachment" },
    403: err("Missing, invalid or expired signature"),
    404: err("No such document or file"),
    409: err("The document was deleted"),
  },
});
signedUrlRoutes.openapi(download, async (c) => serveSignedDownload(c.env, c.get("db"), c.req.valid("param").id, c.req.valid("query")));

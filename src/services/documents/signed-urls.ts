import { AwsClient } from "aws4fetch";
import type { Env } from "../../env";
import { config, ingestConfig, signingSecret } from "../../lib/config";
import { hmacSign, hmacVerify } from "../../lib/crypto";

/** Upload and download URLs live 15 minutes (API-DECISIONS.md). */
export const URL_TTL_SECONDS = 15 * 60;

type Purpose = "upload" | "download";

const message = (purpose: Purpose, documentId: string, expires: number) => `${purpose}\n${documentId}\n${expires}`;

/**
 * A URL of this Worker signed with HMAC-SHA256 (SIGNING_SECRET): it works
 * without credentials until `expires`, for one document and one purpose.
 */
export async function workerSignedUrl(env: Env, purpose: Purpose, documentId: string, now = Date.now()) {
  const expires = Math.floor(now / 1000) + URL_TTL_SECONDS;
  const sig = await hmacSign(signingSecret(env), message(purpose, documentId, expires));
  const path = purpose === "upload" ? "uploads" : "downloads";
  const url = `${config(env).publicBaseUrl}/${path}/${encodeURIComponent(documentId)}?expires=${expires}&sig=${sig}`;
  return { url, expiresAt: new Date(expires * 1000).toISOString() };
}

export type SignatureCheck = "ok" | "missing" | "invalid" | "expired";

export async function verifyWorkerSignature(
  env: Env,
  purpose: Purpose,
  documentId: string,
  expiresParam: string | undefined,
  sig: string | undefined,
): Promise<SignatureCheck> {
  if (!expiresParam || !sig) return "missing";
  if (!/^\d{1,12}$/.test(expiresParam)) return "invalid";
  const expires = Number(expiresParam);
  // Verify before looking at the expiry, so a tampered URL never learns more than "invalid".
  if (!(await hmacVerify(signingSecret(env), message(purpose, documentId, expires), sig))) return "invalid";
  if (Date.now() / 1000 > expires) return "expired";
  return "ok";
}

function r2Client(env: Env) {
  const r2 = ingestConfig(env).r2;
  if (!r2) return null;
  const client = new AwsClient({ accessKeyId: r2.accessKeyId, secretAccessKey: r2.secretAccessKey, service: "s3", region: "auto" });
  const objectUrl = (key: string) =>
    `https://${r2.accountId}.r2.cloudflarestorage.com/${r2.bucketName}/${key.split("/").map(encodeURIComponent).join("/")}`;
  return { client, objectUrl };
}

export const usesR2Presigning = (env: Env) => ingestConfig(env).r2 !== null;

/**
 * An R2 presigned S3 URL (when R2 S3 credentials are configured). The
 * Content-Type is part of the signature, so the upload must send the type
 * given at presign; the size is checked when the bucket's notification arrives.
 */
export async function r2PresignedUrl(
  env: Env,
  method: "PUT" | "GET",
  key: string,
  opts: { contentType?: string; downloadFilename?: string } = {},
  now = Date.now(),
) {
  const r2 = r2Client(env);
  if (!r2) throw new Error("R2 S3 credentials are not configured");
  const url = new URL(r2.objectUrl(key));
  url.searchParams.set("X-Amz-Expires", String(URL_TTL_SECONDS));
  if (opts.downloadFilename) url.searchParams.set("response-content-disposition", contentDisposition(opts.downloadFilename));
  const headers: Record<string, string> = {};
  if (opts.contentType) headers["Content-Type"] = opts.contentType;
  const datetime = new Date(now).toISOString().replace(/[:-]|\.\d{3}/g, "");
  const signed = await r2.client.sign(new Request(url.toString(), { method, headers }), {
    aws: { signQuery: true, allHeaders: true, datetime },
  });
  return { url: signed.url, expiresAt: new Date(now + URL_TTL_SECONDS * 1000).toISOString() };
}

/** `attachment` with an ASCII fallback and the UTF-8 name (RFC 6266). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

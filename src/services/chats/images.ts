import type { Chat } from "../../db/schema";
import type { ServiceContext } from "../../contracts/context";
import type { Env } from "../../env";
import { config } from "../../lib/config";
import { ApiError, badRequest } from "../../lib/errors";
import { assertQuotas } from "../documents/documents";
import { BYTES_PER_GB } from "../tenants";
import { sql } from "drizzle-orm";
import { randomToken } from "../../lib/crypto";
import { nowIso } from "../../lib/time";

/**
 * Images attached to a chat's first message (at most 2 data URLs of png, jpeg,
 * webp or gif, each at most 5 MB). They are stored in R2 under the knowledge
 * base's prefix (so deleting the chat, knowledge base, tenant or organization
 * removes them) and served at an unguessable capability URL,
 * PUBLIC_BASE_URL/chat-images/:chatId/:token.:ext, which is what the message's
 * `imageUrls` carry. Models receive the bytes themselves, never the URL.
 */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

const TYPES: Record<string, { ext: string; mediaType: string }> = {
  png: { ext: "png", mediaType: "image/png" },
  jpeg: { ext: "jpg", mediaType: "image/jpeg" },
  jpg: { ext: "jpg", mediaType: "image/jpeg" },
  webp: { ext: "webp", mediaType: "image/webp" },
  gif: { ext: "gif", mediaType: "image/gif" },
};
const BY_EXT: Record<string, string> = { png: "image/png", jpg: "image/jpeg", webp: "image/webp", gif: "image/gif" };

/** Magic numbers: the bytes must really be the declared kind of image. */
function sniff(bytes: Uint8Array): string | null {
  const b = bytes;
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return "image/png";
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46) return "image/gif";
  if (b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) {
    return "image/webp";
  }
  return null;
}

export const chatPrefix = (chat: Pick<Chat, "organizationId" | "tenantId" | "knowledgeBaseId" | "id">) =>
  `o/${chat.organizationId}/t/${chat.tenantId}/kb/${chat.knowledgeBaseId}/chats/${chat.id}/`;

export interface StoredImage {
  url: string;
  key: string;
  mediaType: string;
}

export async function storeChatImages(ctx: ServiceContext, chat: Chat, dataUrls: string[]): Promise<StoredImage[]> {
  const decoded = dataUrls.map((d, i) => {
    const m = /^data:image\/(png|jpeg|jpg|webp|gif);base64,([\s\S]+)$/.exec(d);
    const path = `body.images.${i}`;
    if (!m) throw badRequest("Images must be base64 data URLs of png, jpeg, webp or gif", [{ path, message: "Not an image data URL" }]);
    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.from(atob(m[2].replace(/\s+/g, "")), (ch) => ch.charCodeAt(0));
    } catch {
      throw badRequest("An image is not valid base64", [{ path, message: "Invalid base64" }]);
    }
    if (bytes.byteLength > MAX_IMAGE_BYTES) throw badRequest("Each image must be at most 5 MB", [{ path, message: "Larger than 5 MB" }]);
    const type = TYPES[m[1]];
    if (sniff(bytes) !== type.mediaType) {
      throw badRequest(`The data of image ${i + 1} is not a ${m[1]} image`, [{ path, message: "Content does not match the declared type" }]);
    }
    return { bytes, type };
  });
  const db = ctx.db;
  // Images count toward the tenant's storage and its quota, whatever the credential (embed tokens too).
  await assertQuotas(db, chat.tenantId, decoded.reduce((n, d) => n + d.bytes.byteLength, 0), { documents: false });
  const base = config(ctx.env).publicBaseUrl;
  const out: StoredImage[] = [];
  for (const { bytes, type } of decoded) {
    const name = `${randomToken(16)}.${type.ext}`;
    const key = `${chatPrefix(chat)}${name}`;
    await ctx.env.BUCKET.put(key, bytes, { httpMetadata: { contentType: type.mediaType } });
    // Recorded so that deleting the chat (or anything above it) cleans the file up and gives its bytes
    // back; the quota is checked again in the same statement, so concurrent chats cannot overshoot it.
    const res = await db.run(sql`
      INSERT INTO chat_files (key, chat_id, knowledge_base_id, tenant_id, size_bytes, media_type, created_at)
      SELECT ${key}, ${chat.id}, ${chat.knowledgeBaseId}, ${chat.tenantId}, ${bytes.byteLength}, ${type.mediaType}, ${nowIso()}
      FROM tenants t WHERE t.id = ${chat.tenantId}
        AND t.storage_used_bytes + ${bytes.byteLength} <= CAST(t.max_storage_gb * ${BYTES_PER_GB} AS INTEGER)`);
    if (!res.meta.changes) {
      await ctx.env.BUCKET.delete(key);
      await assertQuotas(db, chat.tenantId, bytes.byteLength, { documents: false });
      throw new ApiError("quota_exceeded", "The tenant's storage quota does not leave room for this image");
    }
    out.push({ url: `${base}/chat-images/${chat.id}/${name}`, key, mediaType: type.mediaType });
  }
  return out;
}

/** Loads stored images for a model call. */
export async function loadImages(env: Env, images: Array<{ key: string; mediaType: string }>) {
  const out: Array<{ data: Uint8Array; mediaType: string }> = [];
  for (const img of images) {
    const obj = await env.BUCKET.get(img.key);
    if (obj) out.push({ data: new Uint8Array(await obj.arrayBuffer()), mediaType: img.mediaType });
  }
  return out;
}

/** Serves PUBLIC_BASE_URL/chat-images/:chatId/:file (the URL is the capability); null when there is no such image. */
export async function serveChatImage(ctx: ServiceContext, chat: Chat | undefined, file: string): Promise<Response | null> {
  const m = /^([A-Za-z0-9_-]{20,64})\.(png|jpg|webp|gif)$/.exec(file);
  if (!chat || !m) return null;
  const obj = await ctx.env.BUCKET.get(`${chatPrefix(chat)}${file}`);
  if (!obj) return null;
  return new Response(obj.body, {
    headers: {
      "Content-Type": BY_EXT[m[2]],
      "Cache-Control": "private, max-age=3600",
      "Content-Security-Policy": "default-src 'none'; sandbox",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

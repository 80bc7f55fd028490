import type { Env } from "../env";
import { isProduction } from "./config";
import { ApiError } from "./errors";
import { fromBase64Url, toBase64Url } from "./crypto";

/**
 * THE secrets helper: every stored secret (MCP credentials and OAuth tokens,
 * connector tokens, A2A headers and metadata) is sealed here with AES-256-GCM.
 *
 * Envelope: `v1:<kid>:<iv b64url>:<ciphertext+tag b64url>`, a fresh random
 * 96-bit IV per encryption. The additional data binds a ciphertext to its row
 * (`mcp_server:<id>`, `connection:<id>`, ...), so a ciphertext copied into
 * another row does not decrypt.
 *
 * Keys: `ENCRYPTION_KEYS="k2:<b64>,k1:<b64>"` (the first encrypts, all decrypt,
 * chosen by the envelope's kid) or a single `ENCRYPTION_KEY` (kid `k1`), each a
 * base64 32-byte secret. `npm start` writes a development key into .dev.vars;
 * outside production a fixed development key is the last resort, and
 * production refuses to run without a configured key.
 */

interface KeyEntry {
  kid: string;
  raw: Uint8Array;
}

const DEV_KEY = "ZGV2ZWxvcG1lbnQtb25seS1rZXktZG8tbm90LXVzZSE="; // 32 bytes, development and tests only
const enc = new TextEncoder();
const dec = new TextDecoder();
const imported = new Map<string, Promise<CryptoKey>>();

function decodeKey(b64: string, kid: string): Uint8Array {
  let raw: Uint8Array;
  try {
    raw = fromBase64Url(b64.trim().replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_"));
  } catch {
    throw new ApiError("service_unavailable", `Encryption key ${kid} is not valid base64`);
  }
  if (raw.length !== 32) throw new ApiError("service_unavailable", `Encryption key ${kid} must be 32 bytes (base64 of 32 random bytes)`);
  return raw;
}

/** The configured keyring, current key first. */
export function keyring(env: Env): KeyEntry[] {
  const list = env.ENCRYPTION_KEYS?.trim();
  if (list) {
    return list.split(",").map((entry) => {
      const i = entry.indexOf(":");
      if (i <= 0) throw new ApiError("service_unavailable", "ENCRYPTION_KEYS must be 'kid:base64key,kid:base64key'");
      const kid = entry.slice(0, i).trim();
      return { kid, raw: decodeKey(entry.slice(i + 1), kid) };
    });
  }
  const single = env.ENCRYPTION_KEY?.trim();
  if (single) return [{ kid: "k1", raw: decodeKey(single, "k1") }];
  if (isProduction(env)) {
    throw new ApiError("service_unavailable", "ENCRYPTION_KEY is not configured; set it with `wrangler secret put ENCRYPTION_KEY`");
  }
  return [{ kid: "dev", raw: decodeKey(DEV_KEY, "dev") }];
}

function cryptoKey(entry: KeyEntry): Promise<CryptoKey> {
  const id = `${entry.kid}:${toBase64Url(entry.raw)}`;
  let k = imported.get(id);
  if (!k) {
    k = crypto.subtle.importKey("raw", entry.raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    imported.set(id, k);
  }
  return k;
}

/** Seals `plaintext` for the row named by `aad` (for example `mcp_server:<id>`). */
export async function encryptSecret(env: Env, plaintext: string, aad: string): Promise<string> {
  const [current] = keyring(env);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: enc.encode(aad) }, await cryptoKey(current), enc.encode(plaintext));
  return `v1:${current.kid}:${toBase64Url(iv)}:${toBase64Url(new Uint8Array(ct))}`;
}

/** The secret could not be read back (wrong row, tampered, or its key was removed from the ring). */
export class SecretUnreadable extends Error {
  constructor(reason: string) {
    super(`stored secret unreadable: ${reason}`);
  }
}

/** Opens an envelope sealed for `aad`; throws SecretUnreadable (never the plaintext or key material). */
export async function decryptSecret(env: Env, envelope: string, aad: string): Promise<string> {
  const parts = envelope.split(":");
  if (parts.length !== 4 || parts[0] !== "v1") throw new SecretUnreadable("unknown envelope format");
  const entry = keyring(env).find((k) => k.kid === parts[1]);
  if (!entry) throw new SecretUnreadable(`key ${parts[1]} is not in the keyring`);
  try {
    const pt = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64Url(parts[2]), additionalData: enc.encode(aad) },
      await cryptoKey(entry),
      fromBase64Url(parts[3]),
    );
    return dec.decode(pt);
  } catch {
    throw new SecretUnreadable("authentication failed");
  }
}

/** Null-tolerant wrappers for optional columns. */
export const sealOptional = (env: Env, value: string | null | undefined, aad: string) =>
  value === null || value === undefined ? Promise.resolve(null) : encryptSecret(env, value, aad);
export const openOptional = (env: Env, envelope: string | null | undefined, aad: string) =>
  envelope ? decryptSecret(env, envelope, aad) : Promise.resolve(null);

/** True when an envelope was sealed with a key other than the current one (re-encrypt on next write). */
export function needsRotation(env: Env, envelope: string): boolean {
  return envelope.split(":")[1] !== keyring(env)[0].kid;
}

import { describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, needsRotation, SecretUnreadable } from "../../src/lib/secrets";
import type { Env } from "../../src/env";

const key = (byte: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(byte)));
const k1 = { ENCRYPTION_KEY: key(1) } as Env;
const ring = { ENCRYPTION_KEYS: `k2:${key(2)},k1:${key(1)}` } as Env;

describe("secrets helper (AES-GCM envelopes)", () => {
  it("round-trips, with a fresh IV each time and no plaintext in the envelope", async () => {
    const a = await encryptSecret(k1, "s3cret-token", "mcp_server:a");
    const b = await encryptSecret(k1, "s3cret-token", "mcp_server:a");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:k1:/);
    expect(a).not.toContain("s3cret");
    expect(await decryptSecret(k1, a, "mcp_server:a")).toBe("s3cret-token");
  });

  it("refuses another row's ciphertext, tampering and unknown keys", async () => {
    const a = await encryptSecret(k1, "x", "row:1");
    await expect(decryptSecret(k1, a, "row:2")).rejects.toBeInstanceOf(SecretUnreadable);
    const tampered = a.slice(0, -2) + (a.endsWith("A") ? "BB" : "AA");
    await expect(decryptSecret(k1, tampered, "row:1")).rejects.toBeInstanceOf(SecretUnreadable);
    await expect(decryptSecret({ ENCRYPTION_KEY: key(9) } as Env, a.replace(":k1:", ":k9:"), "row:1")).rejects.toBeInstanceOf(SecretUnreadable);
  });

  it("rotates: old envelopes open under the new ring, new ones use the current key", async () => {
    const old = await encryptSecret(k1, "v", "r");
    expect(await decryptSecret(ring, old, "r")).toBe("v");
    expect(needsRotation(ring, old)).toBe(true);
    const fresh = await encryptSecret(ring, "v", "r");
    expect(fresh).toMatch(/^v1:k2:/);
    expect(needsRotation(ring, fresh)).toBe(false);
  });

  it("rejects keys that are not 32 bytes, and production without a key", async () => {
    await expect(encryptSecret({ ENCRYPTION_KEY: btoa("short") } as Env, "v", "r")).rejects.toThrow(/32 bytes/);
    await expect(encryptSecret({ ENVIRONMENT: "production" } as Env, "v", "r")).rejects.toThrow(/ENCRYPTION_KEY/);
  });
});

/**
 * Server-made ids: a short type prefix and 20 random base32 characters (100 bits),
 * for example `org_4k9x...`. Prefixes make logs and support tickets readable and
 * let a route tell a member id from a user id.
 */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

export function randomBase32(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

export type IdPrefix =
  | "usr" | "ses" | "org" | "mem" | "inv" | "env" | "key" | "ten"
  | (string & {});

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase32(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID_RE.test(s);

import { and, eq, lt } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { keyReach } from "../../auth/authorize";
import type { KeyCaller } from "../../contracts/caller";
import { PERMISSIONS } from "../../auth/permissions";
import type { Scope } from "../../contracts/scopes";
import type { Database } from "../../db/client";
import { apiKeys, embedTokens, organizationMembers, organizations, type ApiKey, type EmbedToken, type KnowledgeBase } from "../../db/schema";
import { randomToken, sha256Hex } from "../../lib/crypto";
import { ApiError, badRequest } from "../../lib/errors";
import { newId } from "../../lib/ids";

/**
 * Embed tokens (API-DECISIONS "Wave 2 -> Embedding the chat in customers' sites"): short-lived bearer
 * credentials for web pages. A customer's backend mints one with its API key (or a user session) and
 * hands it to the widget; the secret key never reaches the browser. Only the SHA-256 of the token is
 * stored, like API keys. What a token may do is decided in src/auth/embed.ts (routes and origins) and
 * src/services/chats/access.ts (its end user).
 */

export const EMBED_TOKEN_PREFIX = "kbe_";
export const EMBED_TTL = { min: 60, max: 3600, default: 900 } as const;
export const MAX_EMBED_ORIGINS = 20;
/** The subject of a token minted without external_subject_id: its own, so two tokens never share chats. */
export const PER_TOKEN_SUBJECT_PREFIX = "embed:";
/** Expired tokens are deleted this long after expiry (opportunistically, when tokens are minted). */
const PURGE_AFTER_MS = 24 * 3600 * 1000;

/**
 * `scheme://host[:port]` with scheme http or https: no path (not even "/"), query, fragment, user info
 * or wildcard. Returns the origin as browsers send it (lower case, default port dropped), or null.
 */
export function normalizeOrigin(input: string): string | null {
  if (input.length > 255 || !/^https?:\/\/[^/?#@\s*\\]+$/i.test(input)) return null;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return null;
  }
  if (!url.hostname || url.username || url.password) return null;
  return url.origin;
}

export interface MintInput {
  external_subject_id?: string;
  allowed_origins: string[];
  ttl_seconds?: number;
}

export type Minter = { apiKeyId: string } | { userId: string };

/** Validates the origins (400 naming each bad one) and returns them normalized, without duplicates. */
export function validOrigins(origins: string[]): string[] {
  const bad: { path: string; message: string }[] = [];
  const out: string[] = [];
  origins.forEach((o, i) => {
    const n = normalizeOrigin(o);
    if (!n) bad.push({ path: `body.allowed_origins.${i}`, message: "Must be an origin: http(s)://host[:port], no path or wildcard" });
    else if (!out.includes(n)) out.push(n);
  });
  if (bad.length) throw badRequest(`allowed_origins: ${bad.length} invalid origin(s)`, bad);
  return out;
}

export async function mintEmbedToken(
  db: Database,
  kb: KnowledgeBase,
  input: MintInput,
  minter: Minter,
): Promise<{ token: string; record: EmbedToken }> {
  const origins = validOrigins(input.allowed_origins);
  const subject = input.external_subject_id ?? null;
  if (subject?.startsWith(PER_TOKEN_SUBJECT_PREFIX)) {
    throw badRequest(`external_subject_id may not start with "${PER_TOKEN_SUBJECT_PREFIX}" (reserved)`, [
      { path: "body.external_subject_id", message: `The prefix "${PER_TOKEN_SUBJECT_PREFIX}" is reserved` },
    ]);
  }
  const ttl = input.ttl_seconds ?? EMBED_TTL.default;
  const now = Date.now();
  const token = EMBED_TOKEN_PREFIX + randomToken(32);
  const record: EmbedToken = {
    id: newId("emb"),
    tokenHash: await sha256Hex(token),
    prefix: token.slice(0, 12),
    organizationId: kb.organizationId,
    environmentId: kb.environmentId,
    tenantId: kb.tenantId,
    knowledgeBaseId: kb.id,
    externalSubjectId: subject,
    allowedOrigins: origins,
    createdByApiKeyId: "apiKeyId" in minter ? minter.apiKeyId : null,
    createdByUserId: "userId" in minter ? minter.userId : null,
    expiresAt: new Date(now + ttl * 1000).toISOString(),
    createdAt: new Date(now).toISOString(),
  };
  await db.batch([
    db.insert(embedTokens).values(record),
    db.delete(embedTokens).where(lt(embedTokens.expiresAt, new Date(now - PURGE_AFTER_MS).toISOString())),
  ]);
  return { token, record };
}

/** Drops tokens that expired more than PURGE_AFTER_MS ago (scheduled housekeeping; minting also does it). */
export async function purgeExpiredEmbedTokens(db: Database, at = Date.now()): Promise<void> {
  await db.delete(embedTokens).where(lt(embedTokens.expiresAt, new Date(at - PURGE_AFTER_MS).toISOString()));
}

export function publicEmbedToken(token: string, r: EmbedToken) {
  return {
    token,
    expires_at: r.expiresAt,
    id: r.id,
    tenant_id: r.tenantId,
    knowledge_base_id: r.knowledgeBaseId,
    external_subject_id: r.externalSubjectId,
    allowed_origins: r.allowedOrigins,
  };
}

export const looksLikeEmbedToken = (token: string) => token.startsWith(EMBED_TOKEN_PREFIX);

const minterKey = alias(apiKeys, "minter_key");

/**
 * Resolves `Bearer kbe_...` into a caller: a key restricted to the token's tenant and knowledge base
 * with only `query:rag`, carrying the embed grant. Unknown and expired tokens, and tokens whose minting
 * key was revoked or expired (or lost its reach), or whose minting user is no longer a member with a
 * role that may mint, answer 401. Nothing is cached: revocation works on the next request.
 */
export async function resolveEmbedToken(db: Database, token: string): Promise<KeyCaller> {
  if (!looksLikeEmbedToken(token) || token.length > 200) throw invalidToken();
  const row = await tokenRow(db, token);
  if (!row) throw invalidToken();
  if (Date.parse(row.t.expiresAt) <= Date.now()) throw invalidToken("This embed token has expired");
  assertIssuerStillValid(row);
  return embedCaller(row.t, row.status);
}

const invalidToken = (why = "Invalid embed token") => new ApiError("unauthorized", why);

/** The token by its hash, with its organization's status and whoever minted it (the key, or the user's role). */
async function tokenRow(db: Database, token: string) {
  const hash = await sha256Hex(token);
  return db
    .select({ t: embedTokens, status: organizations.status, key: minterKey, role: organizationMembers.role })
    .from(embedTokens)
    .innerJoin(organizations, eq(organizations.id, embedTokens.organizationId))
    .leftJoin(minterKey, eq(minterKey.id, embedTokens.createdByApiKeyId))
    .leftJoin(
      organizationMembers,
      and(eq(organizationMembers.userId, embedTokens.createdByUserId), eq(organizationMembers.organizationId, embedTokens.organizationId)),
    )
    .where(eq(embedTokens.tokenHash, hash))
    .get();
}

/** A token lives only as long as its issuer may mint: the key unrevoked, unexpired and reaching it; the user a member who may mint. */
function assertIssuerStillValid(row: NonNullable<Awaited<ReturnType<typeof tokenRow>>>): void {
  const t = row.t;
  if (!t.createdByApiKeyId) {
    if (!row.role || !(PERMISSIONS["embed:mint"].roles as readonly string[]).includes(row.role)) {
      throw invalidToken("The user who issued this embed token no longer has access");
    }
    return;
  }
  const k = row.key;
  const scope = { organizationId: t.organizationId, environmentId: t.environmentId, tenantId: t.tenantId, knowledgeBaseId: t.knowledgeBaseId };
  const scopes = new Set((k?.scopes ?? []) as Scope[]);
  const minter: KeyCaller | null = k ? { type: "api_key", key: k, scopes, isAdmin: scopes.has("admin:full"), organizationStatus: row.status } : null;
  const ok =
    minter &&
    !k!.revokedAt &&
    !(k!.expiresAt && Date.parse(k!.expiresAt) <= Date.now()) &&
    (minter.isAdmin || scopes.has("query:rag")) &&
    keyReach(minter, scope) === "ok";
  if (!ok) throw invalidToken("The API key that issued this embed token is no longer valid");
}

/** The caller an embed token is: a key of its tenant and knowledge base with only `query:rag`, carrying the grant. */
function embedCaller(t: EmbedToken, organizationStatus: KeyCaller["organizationStatus"]): KeyCaller {
  const key: ApiKey = {
    id: t.id,
    organizationId: t.organizationId,
    environmentId: t.environmentId,
    name: "embed token",
    prefix: t.prefix,
    keyHash: t.tokenHash,
    scopes: ["query:rag"],
    tenantIds: [t.tenantId],
    knowledgeBaseId: t.knowledgeBaseId,
    expiresAt: t.expiresAt,
    revokedAt: null,
    lastUsedAt: null,
    createdBy: t.createdByUserId,
    createdAt: t.createdAt,
  };
  return {
    type: "api_key",
    key,
    scopes: new Set<Scope>(["query:rag"]),
    isAdmin: false,
    organizationStatus,
    embed: {
      tokenId: t.id,
      tenantId: t.tenantId,
      knowledgeBaseId: t.knowledgeBaseId,
      subject: t.externalSubjectId ?? `${PER_TOKEN_SUBJECT_PREFIX}${t.id}`,
      allowedOrigins: t.allowedOrigins,
      expiresAt: t.expiresAt,
    },
  };
}

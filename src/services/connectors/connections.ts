import type { Database } from "../../db/client";
import type { Env } from "../../env";

/**
 * Connections: who connected which app, with sealed tokens. Every function takes the owner key computed by
 * the caller's identity (never by anything a model or a browser says): `user:<user id>` for a signed-in user,
 * `ext:<tenant id>:<external_subject_id>` for an API-served end user. Nobody else's connection is ever read.
 */

export interface Ctx {
  db: Database;
  env: Env;
}

export type Owner =
  | { kind: "user"; key: string; userId: string }
  | { kind: "ext"; key: string; tenantId: string; organizationId: string; externalSubjectId: string };

export const userOwner = (userId: string): Owner => ({ kind: "user", key: `user:${userId}`, userId });
export const extOwner = (tenant: { id: string; organizationId: string }, externalSubjectId: string): Owner => ({
  kind: "ext",
  key: `ext:${tenant.id}:${externalSubjectId}`,
  tenantId: tenant.id,
  organizationId: tenant.organizationId,
  externalSubjectId,
});
/** The owner key of a turn's subject (`user:<id>` / `ext:<external id>` within the chat's tenant); null for `key:`. */
export function ownerKeyOfSubject(subject: string, tenantId: string): string | null {
  if (subject.startsWith("user:")) return subject;
  if (subject.startsWith("ext:")) return `ext:${tenantId}:${subject.slice(4)}`;
  return null;
}

export const aad = (id: string) => `connector_connection:${id}`;
export const stateAad = (id: string) => `connector_oauth_state:${id}`;
/** An access token this close to expiry is refreshed first. */
export const EXPIRY_SKEW_MS = 60_000;
export const REFRESH_LOCK_MS = 30_000;

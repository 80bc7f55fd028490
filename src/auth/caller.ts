import type { ApiKey, Organization, User } from "../db/schema";
import type { Scope } from "./scopes";

export interface UserCaller {
  type: "user";
  user: User;
  sessionId: string;
}

export interface KeyCaller {
  type: "api_key";
  key: ApiKey;
  scopes: ReadonlySet<Scope>;
  /** `admin:full`: every scope, and every tenant of the key's environment. */
  isAdmin: boolean;
  organizationStatus: Organization["status"];
  /**
   * Set when the bearer credential is an embed token (`kbe_...`, src/services/embed/tokens.ts): the
   * caller then behaves as a key restricted to one tenant and knowledge base with only `query:rag`
   * (`key` is that restriction, `key.id` the token's id), is accepted only on the chat routes of
   * src/auth/embed.ts from one of its origins, and acts as one end user (`subject`).
   */
  embed?: EmbedGrant;
}

export interface EmbedGrant {
  tokenId: string;
  tenantId: string;
  knowledgeBaseId: string;
  /** The end user every chat of this token belongs to: its external_subject_id, or a per-token subject. */
  subject: string;
  allowedOrigins: readonly string[];
  expiresAt: string;
}

export type Caller = UserCaller | KeyCaller;

export const isKey = (c: Caller | null): c is KeyCaller => c?.type === "api_key";
export const isEmbed = (c: Caller | null): c is KeyCaller & { embed: EmbedGrant } => c?.type === "api_key" && !!c.embed;
export const isUser = (c: Caller | null): c is UserCaller => c?.type === "user";

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
  /**
   * Set when the bearer credential is an OAuth access token of the knowledge-base MCP endpoint
   * (src/services/mcp-oauth): the caller then behaves as a key of the grant's tenant with only
   * `query:rag` and `documents:read`, further limited to the knowledge bases the member picked
   * (`key.id` is the grant's id), and is accepted only on POST /api/v1/mcp (src/auth/oauth.ts).
   */
  oauth?: OAuthGrant;
}

export interface OAuthGrant {
  grantId: string;
  /** The member who approved the grant; it works only while they belong to the organization. */
  userId: string;
  clientId: string;
  /** The knowledge bases the member picked, all of `key.tenantIds[0]`. */
  knowledgeBaseIds: readonly string[];
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

/** The id recorded as the creator of what a caller makes: the user's id, or the API key's. */
export const callerId = (c: Caller): string => (c.type === "user" ? c.user.id : c.key.id);

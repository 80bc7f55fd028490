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
}

export type Caller = UserCaller | KeyCaller;

export const isKey = (c: Caller | null): c is KeyCaller => c?.type === "api_key";
export const isUser = (c: Caller | null): c is UserCaller => c?.type === "user";

/** The id recorded as the creator of what a caller makes: the user's id, or the API key's. */
export const callerId = (c: Caller): string => (c.type === "user" ? c.user.id : c.key.id);

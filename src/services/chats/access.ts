import type { Access } from "../../auth/authorize";
import type { ServiceContext } from "../../contracts/context";
import { loadAuthorized } from "../../auth/load";
import type { Caller } from "../../contracts/caller";
import type { Permission } from "../../auth/permissions";
import type { Chat } from "../../db/schema";
import { badRequest, conflict, forbidden, notFound } from "../../lib/errors";
import { chatScope, getChat } from "./chats";

/**
 * Chat ownership, on top of the authorization layer. A chat created with a
 * user session belongs to that user. A chat created with an API key belongs to
 * the application (any key that reaches its tenant and knowledge base) and,
 * when it was created with `external_subject_id`, to that end user: every later
 * call must pass the same value (specification, Authentication §6). Anything
 * else answers 404, so no caller learns that another owner's chat exists.
 */

/**
 * The end user a call acts for: what the caller passed, except for an embed token, whose subject is
 * forced (its external_subject_id, or a per-token subject): it may omit the parameter or repeat its own
 * value, and any other value is refused (403). Every chat an embed token creates or touches is its
 * subject's.
 */
export function effectiveSubject(caller: Caller, externalSubjectId: string | undefined | null): string | undefined | null {
  if (caller.type !== "api_key" || !caller.embed) return externalSubjectId;
  if (externalSubjectId !== undefined && externalSubjectId !== null && externalSubjectId !== caller.embed.subject) {
    throw forbidden("This embed token acts for one end user; external_subject_id cannot name another");
  }
  return caller.embed.subject;
}

/** Signed-in users never pass external_subject_id (API-DECISIONS, "Refusals"). */
export function assertSubjectParam(caller: Caller, externalSubjectId: string | undefined | null) {
  effectiveSubject(caller, externalSubjectId);
  if (caller.type === "user" && externalSubjectId !== undefined && externalSubjectId !== null) {
    throw badRequest("external_subject_id is for API-key calls on behalf of end users; signed-in users cannot send it", [
      { path: "external_subject_id", message: "Not accepted with a user session" },
    ]);
  }
}

export function ownsChat(caller: Caller, chat: Chat, externalSubjectId: string | undefined | null): boolean {
  if (caller.type === "user") return chat.ownerUserId === caller.user.id;
  if (chat.ownerUserId) return false; // a user's own chat is not the application's
  return (chat.externalSubjectId ?? null) === (effectiveSubject(caller, externalSubjectId) ?? null);
}

/** A chat by id, authorized for `permission` and owned by the caller (or its end user), else 404. */
export async function authorizeChat(
  ctx: ServiceContext,
  chatId: string,
  externalSubjectId: string | undefined | null,
  permission: Permission = "query:rag",
): Promise<{ chat: Chat; access: Access }> {
  const caller = ctx.caller;
  assertSubjectParam(caller, externalSubjectId);
  const found = await getChat(ctx.db, chatId.toLowerCase());
  const { row: chat, access } = await loadAuthorized(ctx, permission, found, (ch) => chatScope(ch)!, { what: "Chat" });
  if (!ownsChat(caller, chat, externalSubjectId)) throw notFound("Chat");
  return { chat, access };
}

/** `authorizeChat` when only the chat is needed. */
export async function chatFor(
  ctx: ServiceContext,
  chatId: string,
  externalSubjectId: string | undefined | null,
  permission: Permission = "query:rag",
): Promise<Chat> {
  return (await authorizeChat(ctx, chatId, externalSubjectId, permission)).chat;
}

export function assertNotTerminated(chat: Chat) {
  if (chat.terminatedAt) {
    throw conflict("chat_terminated", `This chat session was terminated at ${chat.terminatedAt}; start a new chat`);
  }
}

import { config } from "../../lib/config";
import type { ServiceContext } from "../../contracts/context";
import { badRequest } from "../../lib/errors";
import type { Chat } from "../../db/schema";
import { enqueueGc } from "../ingest/messages";
import { CLEANUP_CHECK_MS } from "../recovery/leases";
import { wakeSupervisor } from "../recovery/supervisor";
import { knowledgeBaseFor } from "../knowledge-bases";
import { tenantFor } from "../tenants";
import { assertSubjectParam } from "./access";
import { deleteChat, listChats, terminateChat, updateChat } from "./chats";
import { stopTurn } from "./session";

export interface ChatListQuery {
  tenant_id: string;
  knowledge_base_id?: string;
  external_subject_id?: string;
  is_query?: boolean;
  limit: number;
  offset: number;
}

/**
 * GET /chats: a user sees their own chats; a key sees the chats created through
 * keys (its end user's when `external_subject_id` is given). A key restricted
 * to one knowledge base must name it.
 */
export async function listChatsFor(ctx: ServiceContext, q: ChatListQuery) {
  const caller = ctx.caller;
  assertSubjectParam(caller, q.external_subject_id);
  const tenant = await tenantFor(ctx, q.tenant_id, "query:rag", { addressedBy: "param" });
  if (q.knowledge_base_id) {
    // Authorized first, so another organization's knowledge base stays a 404.
    await knowledgeBaseFor(ctx, q.knowledge_base_id, "query:rag", { addressedBy: "param", tenantId: tenant.id, tenantPath: "query.tenant_id" });
  } else if (caller.type === "api_key" && caller.key.knowledgeBaseId) {
    throw badRequest("knowledge_base_id is required for an API key restricted to one knowledge base", [
      { path: "query.knowledge_base_id", message: "Required for this key" },
    ]);
  }
  return listChats(
    ctx.db,
    {
      tenantId: tenant.id,
      knowledgeBaseId: q.knowledge_base_id,
      ownerUserId: caller.type === "user" ? caller.user.id : undefined,
      keyCreated: caller.type === "api_key",
      externalSubjectId: q.external_subject_id,
      isQuery: q.is_query,
    },
    q,
  );
}

/** PATCH /chats/{id}/access: the access level and, unless private, the share URL. */
export async function setChatAccess(ctx: ServiceContext, chat: Chat, level: Chat["accessLevel"]) {
  const updated = await updateChat(ctx.db, chat.id, { accessLevel: level });
  const share_url = level === "private" ? null : `${config(ctx.env).publicBaseUrl}/share/${updated.id}`;
  return { access_level: updated.accessLevel, share_url };
}

/**
 * DELETE /chats/{id}: stops a running turn, deletes the rows; stored images are collected soon after (the
 * deleting statement records them on the garbage list, which the supervisor drains).
 */
export async function removeChat(ctx: ServiceContext, chat: Chat) {
  await stopTurn(ctx.env, chat.id).catch(() => false);
  await deleteChat(ctx.db, chat.id);
  await wakeSupervisor(ctx.env, Date.now() + CLEANUP_CHECK_MS);
  ctx.waitUntil(enqueueGc(ctx.env, 1));
}

/** POST /chats/{id}/terminate: stops a running turn and ends the session (messages kept). */
export async function endChat(ctx: ServiceContext, chat: Chat, reason: string | null) {
  await stopTurn(ctx.env, chat.id).catch(() => false);
  return terminateChat(ctx.db, chat, reason);
}

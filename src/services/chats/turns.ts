import type { Caller } from "../../contracts/caller";
import type { ServiceContext } from "../../contracts/context";
import type { TurnCommand } from "../../contracts/chat-session";
import type { Chat, KnowledgeBase } from "../../db/schema";
import { badRequest, conflict } from "../../lib/errors";
import { actorOf, assertCanSpend } from "../billing/metering";
import { getModel, type ModelInfo } from "../models/registry";
import { linkTurnToRequest } from "../../db/session";
import { loadAttachedArtifacts } from "../artifacts/attached";
import { getSkillsForRun } from "../skills/skills";
import { hasProvider, validateToolSettings } from "../answer/toolbox";
import type { ToolProvider, ToolSettings } from "../../contracts/tools";

/** Validation shared by every turn: model, knowledge base state, credits, extras. */

export function resolveModel(ctx: ServiceContext, id: string, path = "body.model"): ModelInfo {
  const model = getModel(ctx.env, id);
  if (!model) {
    throw badRequest(`Unknown model '${id}'; GET /api/v1/chats/models lists the supported models`, [{ path, message: "Unknown model" }]);
  }
  if (!model.available) {
    throw badRequest(`Model '${id}' is not available on this service (no provider key is configured)`, [
      { path, message: "Model not available" },
    ]);
  }
  return model;
}

export function assertKnowledgeBaseActive(kb: KnowledgeBase) {
  if (kb.status !== "active") {
    throw conflict("knowledge_base_inactive", "This knowledge base is inactive; it does not accept new chats or queries");
  }
}

export interface TurnExtras {
  connector_slugs: string[];
  delegate_agent_ids: string[];
  skill_ids: string[];
  attached_artifact_ids: string[];
}

/**
 * Connected apps and delegates need their capability's tool provider
 * (src/capabilities.ts): without it no slug or agent id can
 * resolve, so naming one is refused rather than ignored. With it, the
 * provider's `validate` decides (validateToolSettings).
 */
export function assertExtrasResolvable(extras: Pick<TurnExtras, "connector_slugs" | "delegate_agent_ids">, providers: readonly ToolProvider[]) {
  if (extras.connector_slugs.length && !hasProvider("connectors", providers)) {
    throw badRequest(`Unknown connector(s): ${extras.connector_slugs.join(", ")}`, [
      { path: "body.connector_slugs", message: "No connected app with this slug is available" },
    ]);
  }
  if (extras.delegate_agent_ids.length && !hasProvider("delegation", providers)) {
    throw badRequest(`Unknown agent(s): ${extras.delegate_agent_ids.join(", ")}`, [
      { path: "body.delegate_agent_ids", message: "No agent with this id exists" },
    ]);
  }
}

/** The end user a turn acts for: memories and connections are looked up by it. */
export function turnSubject(caller: Caller, chat: Pick<Chat, "ownerUserId" | "externalSubjectId">): string {
  if (chat.ownerUserId) return `user:${chat.ownerUserId}`;
  if (chat.externalSubjectId) return `ext:${chat.externalSubjectId}`;
  return caller.type === "api_key" ? `key:${caller.key.id}` : `user:${caller.user.id}`;
}

/** What a chat turn's toolbox may use: the chat's enabled MCP servers, and the turn's own choices. */
export function chatToolSettings(chat: Pick<Chat, "settings">, input: { websearch: boolean; mode: "quick" | "deep"; extras: TurnExtras }): ToolSettings {
  return {
    websearch: input.websearch,
    mcpServerIds: chat.settings.enabled_mcp_server_ids ?? [],
    // Connected apps are a Deep-mode capability (specification, POST /chats/:id/messages).
    connectorSlugs: input.mode === "deep" ? input.extras.connector_slugs : [],
    delegateIds: input.extras.delegate_agent_ids,
    autoSkills: [],
  };
}

/** The chat fields a turn's extras depend on (a chat about to be created has them too). */
export type ChatPlacement = Pick<Chat, "id" | "organizationId" | "environmentId" | "tenantId" | "knowledgeBaseId" | "ownerUserId" | "externalSubjectId" | "settings">;

/**
 * Resolves what a turn names beyond its question — skills and attached
 * artifacts (to their current content), the end user it acts for, and its
 * toolbox settings, checked by every tool provider — refusing bad ids with 400
 * before anything is written or any credit is spent.
 */
export async function resolveTurnExtras(
  ctx: ServiceContext,
  caller: Caller,
  chat: ChatPlacement,
  input: { mode: "quick" | "deep"; websearch: boolean; extras: TurnExtras },
) {
  const providers = ctx.capabilities.tools;
  assertExtrasResolvable(input.extras, providers);
  const db = ctx.db;
  const skills = await getSkillsForRun(db, chat.tenantId, input.extras.skill_ids);
  const attachments = await loadAttachedArtifacts(db, { knowledgeBaseId: chat.knowledgeBaseId, tenantId: chat.tenantId }, input.extras.attached_artifact_ids);
  const subject = turnSubject(caller, chat);
  const toolSettings = chatToolSettings(chat, input);
  await validateToolSettings({ db, env: ctx.env, chat, subject, mode: input.mode, depth: 0 }, toolSettings, providers);
  return { skills, attachments, subject, toolSettings };
}

export async function prepareTurn(
  ctx: ServiceContext,
  caller: Caller,
  chat: Chat,
  kb: KnowledgeBase,
  input: {
    content: string;
    model: ModelInfo;
    mode: "quick" | "deep";
    websearch: boolean;
    operation: TurnCommand["operation"];
    chunkCount?: number;
    extras: TurnExtras;
    images?: TurnCommand["images"];
    /** The credit check, when the caller could start it earlier (assertCanSpend of the chat's tenant). */
    spend?: Promise<void>;
  },
): Promise<TurnCommand> {
  if (chat.terminatedAt) {
    throw conflict("chat_terminated", `This chat session was terminated at ${chat.terminatedAt}; start a new chat`);
  }
  assertKnowledgeBaseActive(kb);
  const db = ctx.db;
  // The credit check runs alongside the extras, but the extras' 400s still come before its 402.
  const spend = (input.spend ?? assertCanSpend(db, chat.tenantId)).then(
    () => null,
    (e: unknown) => e,
  );
  const { skills, attachments, subject, toolSettings } = await resolveTurnExtras(ctx, caller, chat, input);
  // New model work needs available credits; refused before any model call.
  const refused = await spend;
  if (refused) throw refused;
  const command: TurnCommand = {
    chatId: chat.id,
    kb,
    content: input.content,
    modelId: input.model.id,
    mode: input.mode,
    websearch: input.websearch,
    actor: actorOf(caller),
    operation: input.operation,
    stream: false,
    chunkCount: input.chunkCount,
    images: input.images,
    skills: skills.map((sk) => ({ name: sk.name, body: sk.body })),
    attachments,
    toolSettings,
    subject,
  };
  // A JSON answer's bookmark (after the turn's writes) becomes the request's X-D1-Bookmark (src/db/session.ts).
  linkTurnToRequest(command, ctx.db);
  return command;
}


import type { ServiceContext } from "../../contracts/context";
import type { AGENT_MODES } from "../../db/schema";
import { ApiError, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import type { Chat, KnowledgeBase } from "../../db/schema";
import type { TurnCommand } from "../../contracts/chat-session";
import type { ModelInfo } from "../models/registry";
import { assertCanSpend, assertCreditsLeft } from "../billing/metering";
import { getKnowledgeBase, knowledgeBaseFor } from "../knowledge-bases";
import { assertSubjectParam, effectiveSubject } from "./access";
import { appendMessage, createChat, getChat, publicChat, publicMessage, truncateTitle } from "./chats";
import { storeChatImages } from "./images";
import { readCreateState, readTurnState } from "./turn-reads";
import { refusalForgets, rememberPlacement, turnSearchAhead, turnSearchedAhead } from "./search-ahead";
import { recallAhead, turnRecalledAhead } from "./recall-ahead";
import { requestBookmark } from "../../db/session";
import { awaitFirstAnswer, chatIdTaken, firstMessageDigest, firstMessageOf, isSameCreate, type FirstMessage } from "./replay";
import { answeredOrThrow, runTurnJson } from "./session";
import { canReadShared, FORK_SEED_LIMIT, shareSafeMessages, shareSafeMetadata } from "./sharing";
import { assertKnowledgeBaseActive, prepareTurn, resolveModel, resolveTurnExtras, turnSubject, type ChatPlacement } from "./turns";

/** What a turn names beyond its question (validated by the route: src/routes/chats/schemas.ts). */
interface TurnFields {
  agent_mode: (typeof AGENT_MODES)[number];
  websearch_enable: boolean;
  external_subject_id?: string;
  connector_slugs: string[];
  skill_ids: string[];
  delegate_agent_ids: string[];
  attached_artifact_ids: string[];
}

/** POST /chats, as validated (CreateChatBody). */
export interface CreateChatInput extends TurnFields {
  id: string;
  tenant_id: string;
  knowledge_base_id: string;
  model: string;
  title?: string;
  message?: string;
  shared_source_chat_id?: string;
  images: string[];
}

/** POST /chats/:id/messages, as validated (SendMessageBody). */
export interface SendMessageInput extends TurnFields {
  content: string;
  model: string;
}

/** A title from the first message: whitespace collapsed, at most 80 characters. */
export const titleFrom = (message: string) => truncateTitle(message.replace(/\s+/g, " ").trim().slice(0, 80));

/** Messages to seed a fork of a shared chat with; the source must be readable by this caller (404 otherwise). */
async function forkSeed(ctx: ServiceContext, sourceId: string | undefined) {
  if (!sourceId) return [];
  const source = await getChat(ctx.db, sourceId.toLowerCase());
  if (!source || !(await canReadShared(ctx, source, ctx.caller))) throw notFound("Shared chat");
  return (await shareSafeMessages(ctx.db, source.id, FORK_SEED_LIMIT)).rows;
}

/** Where the new chat will live and whose it is (what the extras are checked against before it exists). */
function placementOf(ctx: ServiceContext, body: CreateChatInput, kb: KnowledgeBase): ChatPlacement {
  const caller = ctx.caller;
  return {
    id: body.id.toLowerCase(),
    organizationId: kb.organizationId,
    environmentId: kb.environmentId,
    tenantId: kb.tenantId,
    knowledgeBaseId: kb.id,
    ownerUserId: caller.type === "user" ? caller.user.id : null,
    externalSubjectId: effectiveSubject(caller, body.external_subject_id) ?? null,
    settings: {},
  };
}

/**
 * POST /chats: creates a chat in a knowledge base the caller may query,
 * optionally seeded from a shared chat it can read, and answers the first
 * message when one is sent. Everything is checked before anything is written
 * (subject, knowledge base, tenant, model, extras, fork source, credits). A
 * retry of the same create (same caller, knowledge base and first message)
 * answers what the first one did (./replay.ts).
 */
/**
 * POST /chats: the chat, and its first turn when it has a message. `replayed` when the same create had already
 * been made (the route answers it with `Idempotent-Replayed: true`).
 */
export async function createChatWithFirstTurn(ctx: ServiceContext, body: CreateChatInput) {
  const replay = { replayed: false };
  const out = await createOrReplay(ctx, body, replay);
  return { body: out, replayed: replay.replayed };
}

async function createOrReplay(ctx: ServiceContext, body: CreateChatInput, replay: { replayed: boolean }) {
  const caller = ctx.caller;
  assertSubjectParam(caller, body.external_subject_id);
  const db = ctx.db;
  const digest = body.message ? await firstMessageDigest(body.message) : null;
  const early = startCreateReads(ctx, body);
  const reach = { knowledgeBaseId: body.knowledge_base_id };
  const kb = await refusalForgets(caller, reach, knowledgeBaseFor(ctx, body.knowledge_base_id, "query:rag", { addressedBy: "param", tenantId: body.tenant_id }));
  rememberPlacement(caller, reach, kb);
  const placement = placementOf(ctx, body, kb);
  if (digest) {
    const existing = await early.existing;
    if (existing) return replayCreate(ctx, body, kb, existing, placement, digest, replay);
  }
  assertKnowledgeBaseActive(kb);
  const model = resolveModel(ctx, body.model);
  // Skills, artifacts, connectors and delegates are checked before the chat exists, so a refused
  // first turn leaves nothing behind (and an empty chat cannot name an unknown app either).
  await resolveTurnExtras(ctx, caller, placement, { mode: body.agent_mode, websearch: body.websearch_enable, extras: body });
  const seed = await forkSeed(ctx, body.shared_source_chat_id);
  // A first message is model work: refuse before creating anything (the turn reuses this check).
  const spend = early.credits;
  await spend;

  // The first message's id is fixed now, so a retried create can find its turn.
  const firstMessage: FirstMessage | undefined = digest ? { id: newId("msg"), sha256: digest } : undefined;
  let chat: Chat;
  try {
    chat = await createChat(db, newChatOf(ctx, body, kb, placement, model, firstMessage));
  } catch (e) {
    // A concurrent create with the same id won the insert: the same create is answered like a retry.
    const raced = digest && e instanceof ApiError && e.code === "conflict" ? await getChat(db, placement.id) : undefined;
    if (raced) return replayCreate(ctx, body, kb, raced, placement, digest!, replay);
    throw e;
  }
  for (const m of seed) {
    await appendMessage(db, chat.id, { role: m.role, content: m.content, status: m.status, metadata: shareSafeMetadata(m.metadata) ?? {} });
  }
  const images = body.images.length ? await storeChatImages(ctx, chat, body.images) : undefined;
  if (!body.message) {
    rememberPlacement(caller, { chatId: chat.id }, kb, turnSubject(caller, chat));
    return { chat: publicChat((await getChat(db, chat.id))!) };
  }
  // The chat as just written and its transcript's end travel with the turn: its Durable Object reads neither again.
  const transcript = { maxSeq: seed.length, count: seed.length };
  const fresh = { chat, transcript, searchedAhead: turnSearchedAhead(ctx, early.ahead, kb, transcript), ...(await early.turnState(kb)) };
  return firstTurn(ctx, body, kb, chat, { model, images, spend, userMessageId: firstMessage!.id, fresh });
}

/**
 * What a create with a first message reads alongside the knowledge base's authorization (README "Latency"), each
 * used only after it and reported in the create's order: in one batch (readCreateState), a chat already under
 * this id (a retried create), the tenant's credits (the knowledge base's tenant is body.tenant_id, or the
 * authorization refused) and what the first turn would read again; beside it, the first message's search when
 * this caller searched the knowledge base before (search-ahead.ts).
 */
function startCreateReads(ctx: ServiceContext, body: CreateChatInput) {
  if (!body.message) return { existing: null, credits: undefined, turnState: async () => ({}), ahead: null };
  const reads = readCreateState(ctx.db, { chatId: body.id.toLowerCase(), tenantId: body.tenant_id, kbId: body.knowledge_base_id });
  const existing = reads.then((r) => r.existing);
  const credits = reads.then((r) => assertCreditsLeft(r.credits));
  existing.catch(() => {});
  credits.catch(() => {});
  /** What the turn would read again (its data file, the tenant's memory settings), for the knowledge base authorized. */
  const turnState = async (kb: KnowledgeBase): Promise<Pick<TurnCommand, "tabular" | "memorySettings">> => {
    if (kb.id !== body.knowledge_base_id || kb.tenantId !== body.tenant_id) return {};
    const { tabular, memorySettings } = await reads;
    return { tabular, memorySettings };
  };
  const ahead = turnSearchAhead(ctx, { knowledgeBaseId: body.knowledge_base_id }, { content: body.message, agent_mode: body.agent_mode });
  return { existing, credits, turnState, ahead };
}

/** The new chat's row as the create describes it. */
function newChatOf(ctx: ServiceContext, body: CreateChatInput, kb: KnowledgeBase, placement: ChatPlacement, model: ModelInfo, firstMessage: FirstMessage | undefined) {
  return {
    id: body.id,
    kb,
    model: model.id,
    title: body.title ?? (body.message ? titleFrom(body.message) : null),
    ownerUserId: placement.ownerUserId,
    apiKeyId: apiKeyOf(ctx),
    externalSubjectId: placement.externalSubjectId,
    agentMode: body.agent_mode,
    sharedSourceChatId: body.shared_source_chat_id?.toLowerCase() ?? null,
    settings: {
      websearch_enable: body.websearch_enable,
      skill_ids: body.skill_ids,
      connector_slugs: body.connector_slugs,
      delegate_agent_ids: body.delegate_agent_ids,
      ...(firstMessage ? { first_message: firstMessage } : {}),
    },
  };
}

const apiKeyOf = (ctx: ServiceContext) => {
  const caller = ctx.caller;
  return caller.type === "api_key" ? caller.key.id : null;
};

/** The chat's first turn, answered in the create's response. */
async function firstTurn(
  ctx: ServiceContext,
  body: CreateChatInput,
  kb: KnowledgeBase,
  chat: Chat,
  opts: { model: ModelInfo; images?: TurnCommand["images"]; spend?: Promise<void>; userMessageId: string; fresh?: Pick<TurnCommand, "chat" | "transcript" | "searchedAhead" | "tabular" | "memorySettings"> },
) {
  const cmd = await prepareTurn(ctx, ctx.caller, chat, kb, {
    content: body.message!,
    model: opts.model,
    mode: body.agent_mode,
    websearch: body.websearch_enable,
    operation: "chat",
    extras: body,
    images: opts.images,
    spend: opts.spend,
  });
  // The chat's next turns search (and recall) ahead for this caller.
  rememberPlacement(ctx.caller, { chatId: chat.id }, kb, cmd.subject);
  const outcome = answeredOrThrow(await runTurnJson(ctx.env, { ...cmd, ...opts.fresh, userMessageId: opts.userMessageId }));
  // The chat as created, with its message counters as the turn's final write left them (no read after the turn).
  const fresh = { ...chat, messageCount: outcome.chat.message_count, lastMessageAt: outcome.chat.last_message_at };
  return { chat: publicChat(fresh), user_message: outcome.user_message, assistant_message: outcome.assistant_message, usage: outcome.usage };
}

/**
 * A create whose chat id exists: the same create again answers the chat and its first turn (waiting for a turn
 * still running, settling one whose worker is gone, running one that never started); anything else is 409.
 */
async function replayCreate(
  ctx: ServiceContext,
  body: CreateChatInput,
  kb: KnowledgeBase,
  chat: Chat,
  placement: ChatPlacement,
  digest: string,
  replay: { replayed: boolean },
) {
  if (!isSameCreate(chat, placement, apiKeyOf(ctx), digest)) throw chatIdTaken(chat.id);
  replay.replayed = true;
  const settled = await awaitFirstAnswer(ctx, chat);
  if (!settled) {
    // The create was cut before its first turn started: run it now, as the first request would have.
    assertKnowledgeBaseActive(kb);
    const images = body.images.length ? await storeChatImages(ctx, chat, body.images) : undefined;
    return firstTurn(ctx, body, kb, chat, { model: resolveModel(ctx, body.model), images, userMessageId: firstMessageOf(chat)!.id });
  }
  // A first turn that failed answered its error (502 for the model's); the retry answers the same, not 201.
  // (An answer interrupted by a crash was never answered: the retry returns the chat with it.)
  const failure = settled.answer.metadata.error;
  if (settled.answer.status === "error" && failure && failure.code !== "interrupted") {
    answeredOrThrow({ status: "error", error: { ...failure, retryable: false }, assistant_message: { id: settled.answer.id, chat_id: chat.id } });
  }
  const fresh = (await getChat(ctx.db, chat.id))!;
  const usage = settled.answer.metadata.usage ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0, credits: 0 };
  return { chat: publicChat(fresh), user_message: publicMessage(settled.user), assistant_message: publicMessage(settled.answer), usage };
}

/** Authorizes and validates a message for an existing chat (JSON send and stream alike): the turn command. */
export async function sendCommand(ctx: ServiceContext, chatId: string, body: SendMessageInput): Promise<TurnCommand> {
  // The chat, its knowledge base, the credits and the transcript's end in one round trip (turn-reads.ts), and
  // alongside it the turn's search when this caller reached the chat before (search-ahead.ts): started first, so
  // that when its statements are ready at once they ride in the read's batch (after the read's own statements),
  // and otherwise sent once its vector matches are in (the read first in the database's queue).
  const ahead = turnSearchAhead(ctx, { chatId }, body, true);
  const state = refusalForgets(ctx.caller, { chatId }, readTurnState(ctx, chatId, body.external_subject_id));
  const recall = recallAhead(ctx, { chatId }, body.content, ahead);
  const { chat, kb, spend, transcript, tabular, memorySettings } = await state;
  const cmd = await messageCommand(ctx, chat, kb, body, spend);
  rememberPlacement(ctx.caller, { chatId: chat.id }, kb, cmd.subject);
  // Not awaited: the turn (and its first event) starts without them; they follow when done (session.ts).
  const searchedAhead = turnSearchedAhead(ctx, ahead, kb, transcript);
  const recalledAhead = recall ? turnRecalledAhead(recall) : undefined;
  // The turn's session starts where this request's is: it sees the caller's writes (nothing is written after).
  return { ...cmd, chat, transcript, tabular, memorySettings, searchedAhead, recalledAhead, bookmark: requestBookmark(ctx.db) };
}

/** The turn command of a message for a chat the caller was authorized for (authorizeChat). */
export async function commandForChat(ctx: ServiceContext, chat: Chat, body: SendMessageInput) {
  // Started now, so it overlaps the knowledge base query; prepareTurn reports it in its order
  // (observed here too, for when the knowledge base is not found first).
  const spend = assertCanSpend(ctx.db, chat.tenantId);
  spend.catch(() => {});
  const kb = await getKnowledgeBase(ctx.db, chat.knowledgeBaseId);
  if (!kb) throw notFound("Knowledge base");
  return messageCommand(ctx, chat, kb, body, spend);
}

/** A message's turn command, validated (prepareTurn) for the caller on an authorized chat. */
const messageCommand = (ctx: ServiceContext, chat: Chat, kb: KnowledgeBase, body: SendMessageInput, spend: Promise<void>) =>
  prepareTurn(ctx, ctx.caller, chat, kb, {
    content: body.content,
    model: resolveModel(ctx, body.model),
    mode: body.agent_mode,
    websearch: body.websearch_enable,
    operation: "chat",
    extras: body,
    spend,
  });

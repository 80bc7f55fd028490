import { DurableObject } from "cloudflare:workers";
import { CAPABILITIES } from "../capabilities";
import type { LateTurnParts, TurnCommand, TurnJsonResult, TurnOutcome } from "../contracts/chat-session";
import type { Database } from "../db/client";
import { openSessionDb } from "../db/session";
import type { Env } from "../env";
import { withSimulatedHops } from "../lib/distance";
import { config } from "../lib/config";
import { runTurn, type TurnDeps, type TurnRequest, type TurnResult } from "../services/answer/turn";
import { TurnAbort, type TurnEvent } from "../contracts/turn";
import type { Actor } from "../services/billing/metering";
import { getChat, publicMessage } from "../services/chats/chats";
import { getKnowledgeBase } from "../services/knowledge-bases";
import { getModel } from "../services/models/registry";
import { TranscriptEnd } from "./transcript-end";
import { readLateParts, readTurnBody } from "./turn-body";
import { takeFinishedRun } from "../services/agents/hook";
import { emptyToolSettings } from "../contracts/tools";

/**
 * One Durable Object per chat (named by the chat id). It owns the chat's live
 * state: it runs each turn, writes the SSE stream, and enforces ONE active
 * turn per chat — a new turn aborts the running one (which saves its partial
 * answer first), POST /chats/:id/stop aborts it, and a client disconnect
 * (request.signal, compatibility flag enable_request_signal) aborts it too.
 *
 * The Worker authorizes and validates every request before it gets here; the
 * DO is reachable only through its binding.
 */

interface ActiveTurn {
  controller: AbortController;
  finished: Promise<unknown>;
}

const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
};


declare module "../env" {
  interface DurableObjectClasses {
    ChatSession: ChatSession;
  }
}

export class ChatSession extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withSimulatedHops(env)); // untouched unless a benchmark simulates distance (src/lib/distance.ts)
  }

  private active: ActiveTurn | null = null;
  /** What this object's own turns wrote to the transcript (whether a Worker's read is still current). */
  private readonly transcript = new TranscriptEnd();

  /** `POST /turn`: a streamed turn (its body: src/durable/turn-body.ts); `POST /stop`. */
  async fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/stop" && request.method === "POST") return Response.json({ stopped: await this.stop("stopped") });
    if (pathname === "/turn" && request.method === "POST") return this.turn(request);
    return new Response("not found", { status: 404 });
  }

  /**
   * A turn answered as JSON, called as a method (src/services/chats/session.ts runTurnJson; a method call costs
   * the runtime less than a `fetch`): the command's JSON, and the late parts (the search ahead): their JSON when
   * the Worker had them already, or a stream it writes them to when done, waited for only when the turn needs
   * them. Null when the chat is gone.
   */
  async turnJson(command: string, late: string | ReadableStream<Uint8Array>): Promise<TurnJsonResult> {
    const started = await this.start(JSON.parse(command) as TurnCommand, readLateParts(late));
    return started ? this.answered(started.deps, started.req) : null;
  }

  /** Aborts the running turn (if any) and waits until its partial answer is saved. */
  private async stop(reason: "stopped" | "replaced"): Promise<boolean> {
    const active = this.active;
    if (!active) return false;
    active.controller.abort(new TurnAbort(reason));
    await active.finished.catch(() => {});
    return true;
  }

  private async turn(request: Request): Promise<Response> {
    const { cmd, late } = await readTurnBody(request);
    const started = await this.start(cmd, late);
    if (!started) return Response.json({ error: { code: "not_found", message: "Chat not found" } }, { status: 404 });
    return this.streamed(started.deps, started.req, request.signal);
  }

  /** A turn's start: one active turn per chat (the new one replaces the old one), then what the pipeline takes. */
  private async start(cmd: TurnCommand, late: Promise<LateTurnParts>): Promise<{ deps: TurnDeps; req: TurnRequest } | null> {
    const replaced = await this.stop("replaced");
    const session = openSessionDb(this.env, cmd.bookmark);
    const db = session.db;
    const searchedAhead = late.then((l) => l.searchedAhead);
    const recalledAhead = late.then((l) => l.recalledAhead);
    const req = await this.turnRequest(db, { ...(replaced ? { ...cmd, chat: undefined, transcript: undefined } : cmd), searchedAhead, recalledAhead });
    if (!req) return null;
    return { deps: { db, env: this.env, capabilities: CAPABILITIES, bookmark: session.bookmark }, req };
  }

  /** The turn as the pipeline takes it: the chat read now (after any replaced turn saved its part), its knowledge base and model. */
  private async turnRequest(db: Database, cmd: TurnCommand): Promise<TurnRequest | null> {
    const known = this.transcript.knownEnd(cmd);
    const chat = known && cmd.chat ? cmd.chat : await getChat(db, cmd.chatId);
    const kb = !chat ? undefined : cmd.kb?.id === chat.knowledgeBaseId ? cmd.kb : await getKnowledgeBase(db, chat.knowledgeBaseId);
    const model = getModel(this.env, cmd.modelId);
    if (!chat || !kb || !model) return null;
    return {
      chat,
      kb,
      model,
      content: cmd.content,
      mode: cmd.mode,
      actor: cmd.actor,
      operation: cmd.operation,
      tools: { ...emptyToolSettings(), ...cmd.toolSettings, websearch: cmd.websearch },
      subject: cmd.subject ?? subjectOf(chat, cmd.actor),
      streaming: cmd.stream,
      chunkCount: cmd.chunkCount,
      skills: cmd.skills,
      attachments: cmd.attachments,
      instructions: cmd.instructions,
      images: cmd.images,
      runId: cmd.runId ?? null,
      depth: cmd.depth ?? 0,
      userMessageId: cmd.userMessageId,
      known,
      tabular: known ? cmd.tabular : undefined,
      searchedAhead: cmd.searchedAhead,
      // Read before any turn of this object that ran since the Worker's read (one replaced, too) could change the memory.
      recalledAhead: known && cmd.recalling ? cmd.recalledAhead : undefined,
      memorySettings: cmd.memorySettings,
    };
  }

  private async answered(deps: TurnDeps, req: TurnRequest): Promise<TurnJsonResult> {
    const controller = new AbortController();
    const finished = this.transcript.follow(runTurn(deps, req, () => {}, controller.signal), req.known);
    this.track(controller, finished);
    const done = await finished.catch((e: unknown) => {
      takeFinishedRun(req.runId); // nothing left behind by a turn that failed after its hook
      throw e;
    });
    // An agent run's hook finished the run: the Worker takes it from the outcome instead of finishing it again.
    const run = takeFinishedRun(req.runId);
    return { outcome: run ? { ...outcome(done), run } : outcome(done), bookmark: deps.bookmark?.() ?? null };
  }

  /** The turn as SSE: events as they come, heartbeats, and a client disconnect aborting the turn. */
  private streamed(deps: TurnDeps, req: TurnRequest, clientSignal: AbortSignal): Response {
    const controller = new AbortController();
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    let open = true;
    // Writes are not awaited: a slow or vanished client must never stall the
    // turn (the disconnect is seen through the request's signal instead).
    const send = (chunk: string) => {
      if (!open) return;
      writer.write(encoder.encode(chunk)).catch(() => {
        open = false;
      });
    };
    const emit = (event: TurnEvent) => send(`data: ${JSON.stringify(event)}\n\n`);
    const heartbeat = setInterval(() => send(`event: ping\ndata: {"type":"ping"}\n\n`), config(this.env).sseHeartbeatMs);
    const onDisconnect = () => {
      open = false;
      controller.abort(new TurnAbort("disconnected"));
    };
    clientSignal.addEventListener("abort", onDisconnect, { once: true });

    const finished = this.transcript.follow(runTurn(deps, req, emit, controller.signal), req.known)
      .catch((e) => {
        console.error(`chat ${req.chat.id}: turn crashed`, e);
        emit({ type: "error", message: "The answer could not be completed", code: "internal_error", retryable: true });
      })
      .finally(() => {
        clearInterval(heartbeat);
        clientSignal.removeEventListener("abort", onDisconnect);
        open = false;
        writer.close().catch(() => {});
      });
    this.track(controller, finished);
    return new Response(readable, { headers: SSE_HEADERS });
  }

  private track(controller: AbortController, finished: Promise<unknown>) {
    const entry: ActiveTurn = { controller, finished };
    this.active = entry;
    finished.finally(() => {
      if (this.active === entry) this.active = null;
    }).catch(() => {});
  }
}

/** The end user a chat's turns act for, when the command does not say (see services/chats/turns.ts). */
function subjectOf(chat: { ownerUserId: string | null; externalSubjectId: string | null }, actor: Actor): string {
  if (chat.ownerUserId) return `user:${chat.ownerUserId}`;
  if (chat.externalSubjectId) return `ext:${chat.externalSubjectId}`;
  return actor.apiKeyId ? `key:${actor.apiKeyId}` : actor.userId ? `user:${actor.userId}` : "anonymous";
}

function outcome(r: TurnResult): TurnOutcome {
  return {
    user_message: publicMessage(r.userMessage),
    assistant_message: publicMessage(r.assistantMessage),
    usage: r.usage,
    status: r.status,
    sources: r.sources,
    ...(r.error ? { error: r.error } : {}),
    chat: { message_count: r.chat.messageCount, last_message_at: r.chat.lastMessageAt },
  };
}

import type { LateTurnParts, TurnCommand, TurnJsonResult, TurnOutcome } from "../../contracts/chat-session";
import { adoptTurnBookmark } from "../../db/session";
import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";

/** The chat's Durable Object (one per chat id). */
function stubOf(env: Env, chatId: string) {
  return env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chatId));
}

/** What a turn sends after its command (LateTurnParts: the search and the recall ahead), once they are done. */
function lateParts(cmd: TurnCommand): Promise<LateTurnParts> {
  const settled = <T>(p: Promise<T | undefined> | undefined) => (p ?? Promise.resolve(undefined)).catch(() => undefined);
  return Promise.all([settled(cmd.searchedAhead), settled(cmd.recalledAhead)]).then(([found, recalled]) => ({
    ...(found ? { searchedAhead: found } : {}),
    ...(recalled ? { recalledAhead: recalled } : {}),
  }));
}

/** The command's JSON (the turn starts with it): the command without what follows it. */
function commandJson(cmd: TurnCommand, stream: boolean): string {
  const { searchedAhead, recalledAhead, ...json } = cmd;
  return JSON.stringify({ ...json, stream, ...(recalledAhead ? { recalling: true } : {}) });
}

/**
 * A streamed turn's request to its Durable Object: the command as the first line (the turn starts with it), then
 * what the Worker was still working on when it sent it (LateTurnParts: the search ahead) as the second, when done.
 */
function turnRequest(cmd: TurnCommand): RequestInit {
  const first = commandJson(cmd, true) + "\n";
  const late = lateParts(cmd);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encoder.encode(first));
      controller.enqueue(encoder.encode(JSON.stringify(await late) + "\n"));
      controller.close();
    },
  });
  return { method: "POST", headers: { "Content-Type": "application/x-ndjson" }, body };
}

/**
 * A JSON turn's late parts as a stream of their own, written when they are done: the bytes go to the chat's
 * object as soon as they are written, as the second line of a streamed turn's body does (an object the chat's
 * object called back for them would cost a round trip between the two when the object is far from the Worker).
 */
function lateStream(late: Promise<LateTurnParts>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode(JSON.stringify(await late)));
      controller.close();
    },
  });
}

/** Microtask turns a JSON turn waits for its late parts before it sends them as a stream instead (no I/O waited). */
const SETTLE_TURNS = 32;

/**
 * A JSON turn's late parts: their JSON when they are done by the time the turn is sent (a search that rode in the
 * turn's read is: src/db/rider.ts), a stream otherwise. Inline, they spare the runtime a stream between the Worker
 * and the chat's object (README "Latency").
 */
export async function lateArgument(cmd: TurnCommand): Promise<string | ReadableStream<Uint8Array>> {
  const late = lateParts(cmd);
  let done: LateTurnParts | undefined;
  void late.then((parts) => (done = parts));
  for (let i = 0; i < SETTLE_TURNS && !done; i++) await undefined;
  return done ? JSON.stringify(done) : lateStream(late);
}

/** Runs a turn and streams its events (the DO's SSE response, passed through). */
export function streamTurn(env: Env, cmd: TurnCommand): Promise<Response> {
  return stubOf(env, cmd.chatId).fetch("https://chat-session/turn", turnRequest(cmd));
}

/**
 * Runs a turn to completion and returns its outcome (JSON sends, fast-query, agent runs). A JS RPC call, not a
 * `fetch`: a Durable Object's `fetch` costs the runtime several times the CPU of a method call (README "Latency").
 */
export async function runTurnJson(env: Env, cmd: TurnCommand): Promise<TurnOutcome> {
  // The RPC types map the outcome's row types to `never` (they cannot prove them serializable); they are plain data.
  const late = await lateArgument(cmd);
  const result = (await stubOf(env, cmd.chatId).turnJson(commandJson(cmd, false), late)) as unknown as TurnJsonResult;
  if (!result) throw new ApiError("not_found", "Chat not found");
  adoptTurnBookmark(cmd, result.bookmark);
  return result.outcome;
}

/**
 * A JSON turn whose model call failed answers with an error, never with an empty success: 502
 * `upstream_error` (500 `internal_error` for a failure of our own) saying why. The question, what was
 * generated before the failure and the usage stay in the chat (an assistant message with status "error",
 * charged for what was used), so sending the question again retries.
 */
export function answeredOrThrow<T extends Pick<TurnOutcome, "status" | "error"> & { assistant_message: { id: string; chat_id: string } }>(outcome: T): T {
  if (outcome.status !== "error") return outcome;
  const chatId = outcome.assistant_message.chat_id;
  const model = outcome.error?.code === "model_error";
  const reason = outcome.error?.message ?? "The answer could not be completed";
  const retry = outcome.error?.retryable ? "; send it again to retry" : "";
  throw new ApiError(model ? "upstream_error" : "internal_error", `${reason}. The question is kept in chat ${chatId}${retry}.`, {
    details: [{ path: "chat_id", message: chatId }, { path: "message_id", message: outcome.assistant_message.id }],
  });
}

/** Aborts the chat's active turn; true when one was running. */
export async function stopTurn(env: Env, chatId: string): Promise<boolean> {
  const res = await stubOf(env, chatId).fetch("https://chat-session/stop", { method: "POST" });
  const body = await res.json<{ stopped: boolean }>();
  return body.stopped;
}

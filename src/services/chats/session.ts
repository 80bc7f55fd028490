import type { LateTurnParts, TurnCommand, TurnOutcome } from "../../contracts/chat-session";
import { adoptTurnBookmark, BOOKMARK_HEADER } from "../../db/session";
import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";

/** The chat's Durable Object (one per chat id). */
function stubOf(env: Env, chatId: string) {
  return env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chatId));
}

/**
 * A turn's request to its Durable Object: the command as the first line (the turn starts with it), then what
 * the Worker was still working on when it sent it (LateTurnParts: the search ahead) as the second, when done.
 */
function turnRequest(cmd: TurnCommand, stream: boolean): RequestInit {
  const { searchedAhead, recalledAhead, ...json } = cmd;
  const first = JSON.stringify({ ...json, stream, ...(recalledAhead ? { recalling: true } : {}) }) + "\n";
  const settled = <T>(p: Promise<T | undefined> | undefined) => (p ?? Promise.resolve(undefined)).catch(() => undefined);
  const late: Promise<LateTurnParts> = Promise.all([settled(searchedAhead), settled(recalledAhead)]).then(([found, recalled]) => ({
    ...(found ? { searchedAhead: found } : {}),
    ...(recalled ? { recalledAhead: recalled } : {}),
  }));
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

/** Runs a turn and streams its events (the DO's SSE response, passed through). */
export function streamTurn(env: Env, cmd: TurnCommand): Promise<Response> {
  return stubOf(env, cmd.chatId).fetch("https://chat-session/turn", turnRequest(cmd, true));
}

/** Runs a turn to completion and returns its outcome (JSON sends, fast-query). */
export async function runTurnJson(env: Env, cmd: TurnCommand): Promise<TurnOutcome> {
  const res = await stubOf(env, cmd.chatId).fetch("https://chat-session/turn", turnRequest(cmd, false));
  if (!res.ok) throw new ApiError("not_found", "Chat not found");
  adoptTurnBookmark(cmd, res.headers.get(BOOKMARK_HEADER));
  return res.json<TurnOutcome>();
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

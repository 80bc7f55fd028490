import type { TurnCommand, TurnOutcome } from "../../durable/chat-session";
import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";

/** The chat's Durable Object (one per chat id). */
function stubOf(env: Env, chatId: string) {
  return env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chatId));
}

/** Runs a turn and streams its events (the DO's SSE response, passed through). */
export function streamTurn(env: Env, cmd: TurnCommand): Promise<Response> {
  return stubOf(env, cmd.chatId).fetch("https://chat-session/turn", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ...cmd, stream: true }),
  });
}

/** Runs a turn to completion and returns its outcome (JSON sends, fast-query). */
export async function runTurnJson(env: Env, cmd: TurnCommand): Promise<TurnOutcome> {
  const res = await stubOf(env, cmd.chatId).fetch("https://chat-session/turn", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ...cmd, stream: false }),
  });
  if (!res.ok) throw new ApiError("not_found", "Chat not found");
  return res.json<TurnOutcome>();
}

/** Aborts the chat's active turn; true when one was running. */
export async function stopTurn(env: Env, chatId: string): Promise<boolean> {
  const res = await stubOf(env, chatId).fetch("https://chat-session/stop", { method: "POST" });
  const body = await res.json<{ stopped: boolean }>();
  return body.stopped;
}

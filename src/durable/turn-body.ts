import type { LateTurnParts, TurnCommand } from "../contracts/chat-session";

/**
 * Reads a turn's request (src/services/chats/session.ts): the command from its first line, at once, and what
 * follows it on the second line (LateTurnParts) as a promise, so the turn starts before the Worker is done.
 * A body without a second line (or with a malformed one) has no late parts.
 */
export async function readTurnBody(request: Request): Promise<{ cmd: TurnCommand; late: Promise<LateTurnParts> }> {
  // Bytes decoded as they come (one decoder, no transform stream: a turn's CPU, README "Latency").
  const reader = request.body!.getReader();
  const decoder = new TextDecoder();
  let ended = false;
  const next = async (): Promise<string> => {
    const { done, value } = await reader.read();
    if (!done) return decoder.decode(value, { stream: true });
    ended = true;
    return decoder.decode();
  };
  let text = "";
  while (!text.includes("\n") && !ended) text += await next();
  const cut = text.indexOf("\n");
  const cmd = JSON.parse(cut < 0 ? text : text.slice(0, cut)) as TurnCommand;
  let rest = cut < 0 ? "" : text.slice(cut + 1);
  const late = (async (): Promise<LateTurnParts> => {
    while (!ended) rest += await next();
    return rest.trim() ? (JSON.parse(rest) as LateTurnParts) : {};
  })().catch((e: unknown) => {
    // Only the Worker writes this body: a bad second line is a bug, logged; the turn searches for itself.
    console.warn("turn body: the late parts could not be read:", e instanceof Error ? e.message : e);
    return {};
  });
  return { cmd, late };
}

/**
 * A JSON turn's late parts (ChatSession.turnJson): their JSON, or read from the stream the Worker writes them to
 * when done. A stream that is empty, broken or malformed has no late parts.
 */
export function readLateParts(late: string | ReadableStream<Uint8Array>): Promise<LateTurnParts> {
  return (typeof late === "string" ? Promise.resolve(late) : new Response(late).text())
    .then((text) => (text.trim() ? (JSON.parse(text) as LateTurnParts) : {}))
    .catch((e: unknown) => {
      console.warn("turn: the late parts could not be read:", e instanceof Error ? e.message : e);
      return {};
    });
}

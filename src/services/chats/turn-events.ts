import type { TurnEvent } from "../../contracts/turn";

/**
 * The events of a streamed turn (the chat Durable Object's SSE, or a run's), parsed block by block:
 * for the doors that speak another protocol over the same turn (the OpenAI-compatible stream, the AI
 * SDK UI message stream). Heartbeats and unreadable blocks are skipped. Ending the iteration early
 * (`return`, a thrown error) cancels the turn's stream, which the Durable Object sees as the client
 * leaving: the turn stops and saves what it has.
 */
export async function* turnEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<TurnEvent, void, undefined> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let i: number;
      while ((i = buffer.indexOf("\n\n")) >= 0) {
        const event = parseBlock(buffer.slice(0, i));
        buffer = buffer.slice(i + 2);
        if (event) yield event;
      }
    }
    const last = parseBlock(buffer);
    if (last) yield last;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

function parseBlock(block: string): TurnEvent | null {
  if (block.startsWith("event: ping")) return null;
  const line = block.split("\n").find((l) => l.startsWith("data: "));
  if (!line) return null;
  try {
    const event = JSON.parse(line.slice(6)) as TurnEvent | { type: "ping" };
    return event.type === "ping" ? null : (event as TurnEvent);
  } catch {
    return null;
  }
}

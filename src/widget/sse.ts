/** One event of the answer stream (POST /chats/:id/messages/stream), the fields the widget reads. */
export interface StreamEvent {
  type: string;
  content?: unknown;
  isComplete?: boolean;
  sources?: unknown;
  status?: string;
  message?: string;
}

/** Parses one SSE block ("event:" and "data:" lines); pings and blocks without JSON data are skipped. */
export function parseBlock(block: string): StreamEvent | null {
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (event === "ping" || !data.length) return null;
  try {
    const e = JSON.parse(data.join("\n")) as StreamEvent;
    return e && typeof e === "object" ? e : null;
  } catch {
    return null;
  }
}

/** Reads a text/event-stream body to its end, calling `onEvent` for each event in order. */
export async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (e: StreamEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const flush = (block: string) => {
    const e = parseBlock(block);
    if (e) onEvent(e);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let i: number;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      flush(buf.slice(0, i));
      buf = buf.slice(i + 2);
    }
  }
  if (buf.trim()) flush(buf);
}

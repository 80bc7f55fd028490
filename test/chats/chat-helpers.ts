import { expect } from "vitest";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";
import { API, call, createKb, createOrg, expectStatus, fetchWorker, testServer, type Auth, type TestOrg } from "../helpers";

export const HANDBOOK = `# Employee handbook

## Refunds
Customers can request a refund within 30 days of purchase. Refunds are paid to the original payment method within 5 business days. Gift cards cannot be refunded.

## Shipping
Orders ship within 2 business days from our warehouse in Leeds. Express shipping costs 15 euros and arrives the next day.

## Support hours
The support desk is open Monday to Friday from 9:00 to 17:00 CET. Urgent incidents can be reported by phone at any time.
`;

/** An organization with a knowledge base holding one processed Markdown document. */
export async function kbWithDocument(org?: TestOrg, text = HANDBOOK, filename = "handbook.md") {
  const o = org ?? (await createOrg());
  const auth: Auth = { cookie: o.owner.cookie };
  const kb = await createKb(o);
  const { id } = await uploadFile(auth, kb, { filename, mime: "text/markdown", body: text });
  const doc = await waitForDocument(auth, id);
  expect(doc.status).toBe("processed");
  return { org: o, kb, auth, documentId: id };
}

export interface SseEvent {
  event: string;
  data: any;
}

/** Parses a complete SSE body into events (data lines are JSON). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      return { event, data: JSON.parse(data.join("\n")) };
    });
}

export async function streamMessage(chatId: string, body: Record<string, unknown>, auth: Auth, headers: Record<string, string> = {}) {
  const h: Record<string, string> = { "Content-Type": "application/json", ...headers };
  if (auth.cookie) h.Cookie = auth.cookie;
  if (auth.key) h.Authorization = `Bearer ${auth.key}`;
  return fetchWorker(`${API}/chats/${chatId}/messages/stream`, { method: "POST", headers: h, body: JSON.stringify(body) });
}

/** Reads an SSE response incrementally, calling `onEvent` for each event; resolves with all events. */
export async function readSse(res: Response, onEvent?: (e: SseEvent) => void | Promise<void>): Promise<SseEvent[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let i: number;
    while ((i = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      const [e] = parseSse(block + "\n\n");
      if (e) {
        events.push(e);
        await onEvent?.(e);
      }
    }
  }
  return events;
}

export async function newChat(auth: Auth, kb: { id: string; tenant_id: string }, body: Record<string, unknown> = {}) {
  const r = await call("/chats", {
    ...auth,
    body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", ...body },
  });
  return expectStatus(r, 201);
}

/** How many requests the local OpenAI-compatible server saw whose body contains `needle`. */
export async function upstreamRequests(needle: string): Promise<number> {
  const r = await fetch(`${testServer("openai")}/__requests?contains=${encodeURIComponent(needle)}`);
  return ((await r.json()) as { count: number }).count;
}

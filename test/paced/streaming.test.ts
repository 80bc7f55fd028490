import { describe, expect, it } from "vitest";
import { call, createKey, expectStatus, fetchWorker, API } from "../helpers";
import { kbWithDocument, newChat, readSse, streamMessage, type SseEvent } from "../chats/chat-helpers";

const QUESTION = { content: "How many days do customers have to request a refund, and how are refunds paid?", model: "local-extractive", agent_mode: "quick" };

function untilPartials(n: number, action: () => Promise<void>) {
  let seen = 0;
  let fired = false;
  return async (e: SseEvent) => {
    if (e.data.type === "final_response" && !e.data.isComplete && ++seen >= n && !fired) {
      fired = true;
      await action();
    }
  };
}

describe("SSE streaming", () => {
  it("emits the events in order, incrementally, with a canonical complete answer", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const res = await streamMessage(chat.id, { ...QUESTION, agent_mode: "deep" }, auth);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("Cache-Control")).toMatch(/no-cache/);
    const arrivals: number[] = [];
    const events = await readSse(res, () => void arrivals.push(Date.now()));
    const types = events.map((e) => e.data.type);
    expect(types[0]).toBe("user_message");
    expect(types.at(-1)).toBe("done");
    expect(types.at(-2)).toBe("tokens");
    const sourcesAt = types.indexOf("sources");
    const firstPartial = types.indexOf("final_response");
    expect(sourcesAt).toBeGreaterThan(0);
    expect(firstPartial).toBeGreaterThan(sourcesAt);
    // Planning events come before the sources.
    expect(types.slice(1, sourcesAt)).toEqual(expect.arrayContaining(["agent_thought", "todo_update"]));
    const finals = events.filter((e) => e.data.type === "final_response");
    const complete = finals.filter((e) => e.data.isComplete);
    expect(complete).toHaveLength(1);
    expect(finals.at(-1)!.data.isComplete).toBe(true);
    const partialText = finals.filter((e) => !e.data.isComplete).map((e) => e.data.content).join("");
    expect(partialText.length).toBeGreaterThan(20);
    expect(complete[0].data.content).toBe(partialText);
    // Paced: the answer arrived over time, not in one piece.
    expect(arrivals.at(-1)! - arrivals[firstPartial]).toBeGreaterThan(100);
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ chat_id: chat.id, status: "complete" });
    expect(done.usage.credits).toBeGreaterThan(0);
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    expect(msgs.messages[1]).toMatchObject({ id: done.message_id, content: complete[0].data.content, metadata: { status: "complete" } });
  });

  it("POST /stop aborts the stream; the partial answer is saved", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const res = await streamMessage(chat.id, QUESTION, auth);
    let stop: any;
    const events = await readSse(
      res,
      untilPartials(3, async () => {
        stop = expectStatus(await call(`/chats/${chat.id}/stop`, { ...auth, method: "POST" }), 200);
      }),
    );
    expect(stop).toEqual({ stopped: true });
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ type: "done", status: "partial", stop_reason: "stopped" });
    expect(events.some((e) => e.data.type === "final_response" && e.data.isComplete)).toBe(false);
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    const saved = msgs.messages[1];
    expect(saved.metadata.status).toBe("partial");
    expect(saved.content.length).toBeGreaterThan(0);
    const streamed = events.filter((e) => e.data.type === "final_response").map((e) => e.data.content).join("");
    expect(saved.content.startsWith(streamed) || streamed.startsWith(saved.content)).toBe(true);
    // The started turn was charged.
    expect(saved.metadata.usage.credits).toBeGreaterThan(0);
  });

  it("a new stream on the same chat replaces the running one", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const first = await streamMessage(chat.id, QUESTION, auth);
    let second: Promise<SseEvent[]> | undefined;
    const firstEvents = await readSse(
      first,
      untilPartials(2, async () => {
        const res = await streamMessage(chat.id, { ...QUESTION, content: "When is the support desk open?" }, auth);
        second = readSse(res);
      }),
    );
    expect(firstEvents.at(-1)!.data).toMatchObject({ type: "done", status: "partial", stop_reason: "replaced" });
    const secondEvents = await second!;
    expect(secondEvents.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    expect(msgs.messages.map((m: any) => [m.role, m.metadata.status])).toEqual([
      ["user", "complete"],
      ["assistant", "partial"],
      ["user", "complete"],
      ["assistant", "complete"],
    ]);
  });

  it("a client disconnect aborts generation and keeps the partial answer", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const res = await streamMessage(chat.id, QUESTION, auth);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes('"final_response"')) text += (await reader.read()).value ?? "";
    await reader.cancel();
    let saved: any;
    for (let i = 0; i < 100 && !saved; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
      saved = msgs.messages.find((m: any) => m.role === "assistant");
    }
    expect(saved?.metadata.status).toBe("partial");
    expect(expectStatus(await call(`/chats/${chat.id}/stop`, { ...auth, method: "POST" }), 200)).toEqual({ stopped: false });
  });

  it("a provider failing mid-stream ends in an error event and keeps what was generated", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const events = await readSse(await streamMessage(chat.id, { ...QUESTION, model: "test-gpt-fail-mid-stream" }, auth));
    const last = events.at(-1)!.data;
    expect(last).toMatchObject({ type: "error", code: "model_error" });
    expect(typeof last.message).toBe("string");
    expect(typeof last.retryable).toBe("boolean");
    const partial = events.filter((e) => e.data.type === "final_response").map((e) => e.data.content).join("");
    expect(partial.length).toBeGreaterThan(0);
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    expect(msgs.messages[1]).toMatchObject({ content: partial, metadata: { status: "error" } });
    expect(msgs.messages[1].metadata.usage.input_tokens).toBeGreaterThan(0);
  });

  it("sends ping heartbeats on a slow stream", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const events = await readSse(await streamMessage(chat.id, { ...QUESTION, model: "test-gpt-slow" }, auth));
    const pings = events.filter((e) => e.event === "ping");
    expect(pings.length).toBeGreaterThan(0);
    expect(pings[0].data).toEqual({ type: "ping" });
    expect(events.at(-1)!.data.type).toBe("done");
  });

  it("says when web search is not configured, and still answers", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const events = await readSse(await streamMessage(chat.id, { ...QUESTION, websearch_enable: true }, auth));
    const thoughts = events.filter((e) => e.data.type === "agent_thought").map((e) => e.data.content);
    expect(thoughts.join(" ")).toMatch(/web search is not configured/i);
    expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });
  });

  it("streams to a browser on another origin with an API key (CORS)", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const { chat } = await newChat({ key }, kb);
    const pre = await fetchWorker(`${API}/chats/${chat.id}/messages/stream`, {
      method: "OPTIONS",
      headers: { Origin: "https://customer-app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const res = await streamMessage(chat.id, QUESTION, { key }, { Origin: "https://customer-app.example" });
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
    const events = await readSse(res);
    expect(events.at(-1)!.data.type).toBe("done");
  });
});

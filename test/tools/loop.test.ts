import { describe, expect, it } from "vitest";
import { call, expectStatus, testServer, unique } from "../helpers";
import { kbWithDocument, newChat, readSse, streamMessage, upstreamRequests } from "../chats/chat-helpers";

/**
 * The toolbox loop with a tool-calling model: the local OpenAI-compatible
 * server follows `@call <tool> {json}` / `@loop` directives in the question
 * (test/servers/openai-chat.ts), and the web-search server can be slow or fail
 * (test/servers/searx.ts).
 */
const ask = (content: string, extra: Record<string, unknown> = {}) => ({ content, model: "test-gpt", agent_mode: "deep", websearch_enable: true, ...extra });

/** Waits until the slow search server reports `what` for query `q`. */
async function searchServer(what: "started" | "aborted", q: string) {
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${testServer("searx")}/__${what}?q=${encodeURIComponent(q)}`);
    if (((await r.json()) as { yes: boolean }).yes) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe("toolbox loop", () => {
  it("uses two tools in one turn and cites both results", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb, { model: "test-gpt" });
    const r = expectStatus(
      await call(`/chats/${chat.id}/messages`, { ...auth, body: ask('Refund rules? @call kb__search {"query":"refund gift cards"} @call web__search {"query":"reviews"}') }),
      200,
    );
    const msg = r.assistant_message;
    expect(msg.metadata.tool_calls.map((t: any) => t.tool).sort()).toEqual(["kb__search", "web__search"]);
    const cited = [...msg.content.matchAll(/\[(\d+)\]/g)].map((m: RegExpMatchArray) => Number(m[1]));
    const byIndex = new Map(msg.metadata.sources.map((s: any) => [s.index, s]));
    const citedSources = cited.map((n) => byIndex.get(n)) as any[];
    expect(citedSources.every(Boolean)).toBe(true);
    // One citation points at a knowledge-base passage found by kb__search, one at the web result.
    expect(citedSources.some((s) => s.document_id && /gift cards/i.test(s.text))).toBe(true);
    expect(citedSources.some((s) => s.url === "https://example.org/web-result" && /reviews/.test(s.text))).toBe(true);
  });

  it("streams tool activity before the sources and the answer", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb, { model: "test-gpt" });
    const events = await readSse(await streamMessage(chat.id, ask('Shipping? @call web__search {"query":"couriers"}'), auth));
    const types = events.map((e) => e.data.type);
    const thoughts = events.filter((e) => e.data.type === "agent_thought").map((e) => e.data.content);
    expect(thoughts).toContain('Searching the web for "couriers".');
    const toolThought = thoughts.indexOf('Searching the web for "couriers".');
    const thoughtAt = events.findIndex((e) => e.data.type === "agent_thought" && e.data.content === thoughts[toolThought]);
    expect(thoughtAt).toBeLessThan(types.indexOf("sources"));
    expect(types.indexOf("sources")).toBeLessThan(types.indexOf("final_response"));
    expect(types.slice(-2)).toEqual(["tokens", "done"]);
  });

  it("a failing tool is an error result the model sees, not a failed turn", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb, { model: "test-gpt" });
    const events = await readSse(await streamMessage(chat.id, ask('News? @call web__search {"query":"failsearch today"}'), auth));
    expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });
    expect(events.some((e) => e.data.type === "agent_thought" && /web__search failed/.test(e.data.content))).toBe(true);
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    expect(msgs.messages[1].metadata.tool_calls).toEqual([expect.objectContaining({ tool: "web__search", is_error: true })]);
  });

  it("the step budget stops a model that keeps calling tools, and it still answers", async () => {
    const { kb, auth } = await kbWithDocument();
    const nonce = unique("loop");
    const r = await newChat(auth, kb, { model: "test-gpt", agent_mode: "deep", message: `Refunds? ${nonce} @loop` });
    expect(r.assistant_message.metadata.status).toBe("complete");
    expect(r.assistant_message.metadata.tool_calls).toHaveLength(8); // MAX_TOOL_STEPS
    expect(r.assistant_message.content).toMatch(/According to the tools/);
    expect(await upstreamRequests(nonce)).toBe(9); // 8 tool steps + the answer with tool choice "none"
  });

  for (const how of ["stopped", "replaced", "disconnected"] as const) {
    it(`aborts a slow tool when the stream is ${how}; the partial answer is saved`, async () => {
      const { kb, auth } = await kbWithDocument();
      const { chat } = await newChat(auth, kb, { model: "test-gpt" });
      const q = unique("slowsearch-");
      const res = await streamMessage(chat.id, ask(`Anything? @call web__search {"query":"${q}"}`), auth);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      while (!buffer.includes(`Searching the web for \\"${q}\\".`)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended early: ${buffer}`);
        buffer += value;
      }
      expect(await searchServer("started", q)).toBe(true);
      if (how === "stopped") {
        expect(expectStatus(await call(`/chats/${chat.id}/stop`, { ...auth, method: "POST" }), 200)).toEqual({ stopped: true });
      } else if (how === "replaced") {
        const second = await streamMessage(chat.id, ask("Shipping? @notools", { websearch_enable: false }), auth);
        const events = await readSse(second);
        expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });
      } else {
        await reader.cancel();
      }
      if (how !== "disconnected") {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
        }
        expect(buffer).toMatch(new RegExp(`"status":"partial","stop_reason":"${how}"`));
      }
      expect(await searchServer("aborted", q)).toBe(true);
      let saved: any;
      for (let i = 0; i < 50 && !saved; i++) {
        const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
        saved = msgs.messages.find((m: any) => m.role === "assistant" && m.metadata.status === "partial");
        if (!saved) await new Promise((r) => setTimeout(r, 100));
      }
      expect(saved).toBeTruthy();
    });
  }

  it("tool calls stay in the owner's metadata and never reach shared transcripts", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = await newChat(auth, kb, { model: "test-gpt", agent_mode: "deep", message: "Refund rules?" });
    expect(r.assistant_message.metadata.tool_calls?.length).toBeGreaterThan(0);
    expectStatus(await call(`/chats/${r.chat.id}/access`, { ...auth, method: "PATCH", body: { access_level: "public" } }), 200);
    const shared = expectStatus(await call(`/shared-chats/${r.chat.id}`), 200);
    const text = JSON.stringify(shared);
    expect(text).not.toContain("tool_calls");
    expect(text).not.toContain(r.assistant_message.metadata.tool_calls[0].call_id);
    for (const m of shared.messages) expect(Object.keys(m.metadata ?? {}).every((k) => ["sources", "memoryUsed", "delegatedAgentIds", "imageUrls"].includes(k))).toBe(true);
    const page = await (await call(`http://localhost:8787/share/${r.chat.id}`)).res;
    expect(JSON.stringify(await call(`http://localhost:8787/share/${r.chat.id}`))).not.toContain("kb__search");
    expect(page.status).toBe(200);
  });
});

import { describe, expect, it } from "vitest";
import { applyEvent, readEvents, type StreamEvent, type Turn } from "../../src/console/pages/playground/stream";

/** The playground's reading of the chat stream (the API's "Events" rules), without a browser. */
function bodyOf(chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

const fresh = (): Turn => ({ id: "a", role: "assistant", content: "", sources: [], steps: [], status: "streaming" });

describe("the playground's stream reader", () => {
  it("reads data blocks split anywhere, with CRLF, skipping pings and comments", async () => {
    const seen: StreamEvent[] = [];
    const wire = [
      ': hello\n\nevent: ping\ndata: {"type":"ping"}\n\n',
      'data: {"type":"final_response","content":"Thir',
      'ty days","isComplete":false}\r\n\r\ndata: {"type":"done","chat_id":"c","message_id":"m","usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3,"credits":0.1},"status":"complete"}\n\n',
    ];
    await readEvents(bodyOf(wire), (e) => seen.push(e));
    expect(seen.map((e) => e.type)).toEqual(["final_response", "done"]);
    expect(seen[0]).toMatchObject({ content: "Thirty days", isComplete: false });
  });

  it("keeps the rows and charts a query streamed, in order", () => {
    let t = fresh();
    t = applyEvent(t, { type: "data_preview", sql: "SELECT region, SUM(amount) AS total FROM sales GROUP BY region", columns: ["region", "total"], rows: [["North", 1500.75]], row_count: 1 });
    const spec = { $schema: "https://vega.github.io/schema/vega-lite/v5.json", data: { values: [{ region: "North", total: 1500.75 }] }, mark: { type: "bar" } };
    t = applyEvent(t, { type: "chart", spec });
    t = applyEvent(t, { type: "data_preview", sql: "SELECT 1 AS one", columns: ["one"], rows: [[1]], row_count: 1 });
    expect(t.previews?.map((p) => p.sql)).toEqual(["SELECT region, SUM(amount) AS total FROM sales GROUP BY region", "SELECT 1 AS one"]);
    expect(t.previews?.[0].rows).toEqual([["North", 1500.75]]);
    expect(t.charts).toEqual([spec]);
  });

  it("appends partial answers and replaces them with the complete one", () => {
    let t = fresh();
    for (const content of ["Customers ", "have 30 ", "days"]) t = applyEvent(t, { type: "final_response", content, isComplete: false });
    expect(t.content).toBe("Customers have 30 days");
    t = applyEvent(t, { type: "final_response", content: "Customers have 30 days [1].", isComplete: true });
    expect(t.content).toBe("Customers have 30 days [1].");
  });

  it("keeps sources, tool events, the final state and errors", () => {
    let t = fresh();
    t = applyEvent(t, { type: "agent_thought", content: "Searching the handbook." });
    t = applyEvent(t, { type: "mcp_tool_call", call_id: "1", tool: "lookup", arguments: { q: "refund" }, server_id: "mcp_1", connector_slug: null });
    t = applyEvent(t, { type: "mcp_tool_result", call_id: "1", tool: "lookup", result: "nothing", is_error: true });
    const source = { index: 1, document_id: "doc_1", filename: "refunds.md", chunk_id: "c1", text: "30 days", score: 0.5, page: null, url: null };
    t = applyEvent(t, { type: "sources", sources: [source] });
    expect(t.steps.map((s) => s.kind)).toEqual(["thought", "call", "result"]);
    expect(t.steps[1].text).toContain('lookup({"q":"refund"})');
    expect(t.steps[2]).toMatchObject({ isError: true });
    expect(t.sources).toEqual([source]);
    const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, credits: 0 };
    expect(applyEvent(t, { type: "done", chat_id: "c", message_id: "msg_9", usage, status: "partial" })).toMatchObject({ id: "msg_9", status: "partial" });
    expect(applyEvent(t, { type: "error", message: "Not enough credits", code: "insufficient_credits", retryable: false })).toMatchObject({
      status: "error",
      error: "Not enough credits",
    });
  });
});

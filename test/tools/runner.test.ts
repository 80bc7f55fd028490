import { describe, expect, it } from "vitest";
import { SourceLedger } from "../../src/services/answer/sources";
import { TOOL_RESULT_MAX_CHARS, ToolRunner } from "../../src/services/answer/tool-runner";
import type { TurnEvent } from "../../src/contracts/turn";
import { assembleToolbox } from "../../src/services/answer/toolbox";
import type { Tool, ToolProvider, TurnScope } from "../../src/contracts/tools";

const scope = { chat: { id: "c" }, subject: "user:u", depth: 0 } as unknown as TurnScope;
const tool = (over: Partial<Tool>): Tool => ({
  name: "t",
  description: "d",
  inputSchema: { type: "object" },
  kind: "text",
  origin: { type: "internal" },
  execute: async () => ({ text: "ok" }),
  ...over,
});
const passage = (text: string, chunk: string) => ({ document_id: "doc", filename: "f.md", chunk_id: chunk, text, score: 1, page: null });

function runner(timeoutMs = 30_000, signal = new AbortController().signal) {
  const events: TurnEvent[] = [];
  const ledger = new SourceLedger();
  return { events, ledger, run: new ToolRunner(scope, ledger, (e) => void events.push(e), signal, timeoutMs) };
}

describe("ToolRunner", () => {
  it("numbers passages across tools, keeping a known passage's number", async () => {
    const { run, ledger } = runner();
    const a = await run.call(tool({ kind: "passages", execute: async () => ({ passages: [passage("one", "c1"), passage("two", "c2")] }) }), {});
    const b = await run.call(tool({ kind: "passages", execute: async () => ({ passages: [passage("two", "c2"), passage("three", "c3")] }) }), {});
    expect(a.sources.map((s) => s.index)).toEqual([1, 2]);
    expect(b.sources.map((s) => s.index)).toEqual([2, 3]);
    expect(b.text).toContain("[3] (f.md) three");
    expect(ledger.size).toBe(3);
  });

  it("caps result text at 32 KB, marked as truncated", async () => {
    const { run } = runner();
    const r = await run.call(tool({ execute: async () => ({ text: "x".repeat(100_000) }) }), {});
    expect(r.text.length).toBeLessThan(TOOL_RESULT_MAX_CHARS + 200);
    expect(r.text).toMatch(/truncated: the result was 100000 characters/);
  });

  it("turns a timeout and a throw into error results, and records every call", async () => {
    const { run } = runner(50);
    const slow = await run.call(tool({ name: "slow", execute: () => new Promise(() => {}) }), { q: 1 });
    expect(slow).toMatchObject({ isError: true });
    expect(slow.text).toMatch(/did not answer within/);
    const broken = await run.call(tool({ name: "broken", execute: async () => { throw new Error("kaput"); } }), {});
    expect(broken.text).toMatch(/kaput/);
    expect(run.calls.map((c) => [c.tool, c.is_error])).toEqual([["slow", true], ["broken", true]]);
    // A tool may declare a longer budget of its own (delegates run whole turns).
    const patient = await run.call(tool({ name: "patient", timeoutMs: 500, execute: () => new Promise((r) => setTimeout(() => r({ text: "late but fine" }), 150)) }), {});
    expect(patient).toMatchObject({ isError: false, text: "late but fine" });
  });

  it("a stopped turn aborts the tool and propagates the stop", async () => {
    const turn = new AbortController();
    const { run } = runner(30_000, turn.signal);
    let toolSignal: AbortSignal | undefined;
    const pending = run.call(tool({ execute: (_i, ctx) => ((toolSignal = ctx.signal), new Promise(() => {})) }), {});
    turn.abort(new Error("stopped"));
    await expect(pending).rejects.toThrow("stopped");
    expect(toolSignal?.aborted).toBe(true);
  });

  it("external tools emit mcp_tool_call / mcp_tool_result; data and charts emit their events", async () => {
    const { run, events } = runner();
    await run.call(
      tool({
        origin: { type: "connector", slug: "github", tool: "search" },
        execute: async () => ({ text: "r", data: { sql: "SELECT 1", columns: ["a"], rows: Array.from({ length: 50 }, (_, i) => [i]), row_count: 50 }, chart: { spec: { mark: "bar" } } }),
      }),
      { query: "x" },
      "call_9",
    );
    expect(events.map((e) => e.type)).toEqual(["mcp_tool_call", "data_preview", "chart", "mcp_tool_result"]);
    expect(events[0]).toMatchObject({ call_id: "call_9", server_id: null, connector_slug: "github", tool: "search", arguments: { query: "x" } });
    expect((events[1] as any).rows).toHaveLength(20);
    expect(events[3]).toMatchObject({ call_id: "call_9", is_error: false, result: "r" });
  });
});

describe("assembleToolbox", () => {
  it("makes names safe and unique, and leaves out a provider that fails", async () => {
    const providers: ToolProvider[] = [
      { name: "a", tools: async () => [tool({ name: "mcp__my server__do it" }), tool({ name: "mcp__my server__do it" })] },
      { name: "broken", tools: async () => { throw new Error("remote down"); } },
    ];
    const box = await assembleToolbox(scope, { websearch: false, mcpServerIds: [], connectorSlugs: [], delegateIds: [], autoSkills: [] }, providers);
    expect(box.tools.map((t) => t.name)).toEqual(["mcp__my_server__do_it", "mcp__my_server__do_it_2"]);
  });
});

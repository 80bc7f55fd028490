import { describe, expect, it } from "vitest";
import { kbWithDocument, newChat, readSse, streamMessage } from "../chats/chat-helpers";
import { call, expectStatus, type Auth } from "../helpers";
import { mcpUrl, registerReady } from "./mcp-helpers";

/** Tool-calling turns (the lead's toolbox loop) with the scripted test model calling MCP tools. */

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ content, model: "test-gpt", agent_mode: "deep", ...extra });

async function chatWithServer() {
  const { org, kb, auth } = await kbWithDocument();
  const server = await registerReady(org, { name: "Open Tools", url: mcpUrl("/open/mcp") });
  const { chat } = await newChat(auth, kb, { model: "test-gpt" });
  expectStatus(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [server.id] } }), 200);
  return { org, kb, auth: auth as Auth, server, chat };
}

describe("MCP tools in a turn", () => {
  it("the model calls an MCP tool: mcp_tool_call / mcp_tool_result events, the answer cites the result, tool_calls recorded", async () => {
    const { auth, server, chat } = await chatWithServer();
    const events = await readSse(await streamMessage(chat.id, ask('What does the tool say? @call mcp__open_tools__echo {"text":"the MCP server says hello"}'), auth));
    const types = events.map((e) => e.data.type);
    const callEv = events.find((e) => e.data.type === "mcp_tool_call")!.data;
    expect(callEv).toMatchObject({ server_id: server.id, connector_slug: null, tool: "echo", arguments: { text: "the MCP server says hello" } });
    const resultEv = events.find((e) => e.data.type === "mcp_tool_result")!.data;
    expect(resultEv).toMatchObject({ call_id: callEv.call_id, server_id: server.id, connector_slug: null, tool: "echo", is_error: false });
    expect(resultEv.result).toContain("echo: the MCP server says hello");
    expect(types.indexOf("mcp_tool_call")).toBeLessThan(types.indexOf("mcp_tool_result"));
    expect(types.indexOf("mcp_tool_result")).toBeLessThan(types.indexOf("sources"));
    expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });

    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    const answer = msgs.messages[1];
    const cited = [...answer.content.matchAll(/\[(\d+)\]/g)].map((m: RegExpMatchArray) => Number(m[1]));
    const byIndex = new Map(answer.metadata.sources.map((s: any) => [s.index, s]));
    const citedSources = cited.map((n) => byIndex.get(n)) as any[];
    expect(citedSources.some((s) => s?.filename === "Open Tools: echo" && s.text === "echo: the MCP server says hello")).toBe(true);
    expect(answer.metadata.tool_calls).toEqual([
      expect.objectContaining({ call_id: callEv.call_id, tool: "mcp__open_tools__echo", arguments: { text: "the MCP server says hello" }, is_error: false }),
    ]);
  });

  it("calls to one server in a turn share one connection (one initialize), closed with the turn", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const name = `counted${Date.now()}`;
    const server = await registerReady(org, { name: "Counted", url: mcpUrl(`/count/${name}/mcp`) });
    const { chat } = await newChat(auth, kb, { model: "test-gpt" });
    expectStatus(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [server.id] } }), 200);
    const stats = async () => (await fetch(mcpUrl(`/count/${name}/stats`))).json() as Promise<Record<string, number>>;
    const before = await stats(); // registration's discovery connected once
    const events = await readSse(
      await streamMessage(chat.id, ask('Both, please. @call mcp__counted__echo {"text":"one"} @call mcp__counted__add {"a":2,"b":3}'), auth),
    );
    expect(events.filter((e) => e.data.type === "mcp_tool_result").map((e) => e.data.is_error)).toEqual([false, false]);
    const after = await stats();
    expect((after["tools/call"] ?? 0) - (before["tools/call"] ?? 0)).toBe(2);
    expect((after.initialize ?? 0) - (before.initialize ?? 0)).toBe(1);
  });

  it("a tool error is an is_error result, and the turn still completes", async () => {
    const { auth, chat } = await chatWithServer();
    const events = await readSse(await streamMessage(chat.id, ask("Try it. @call mcp__open_tools__fail {}"), auth));
    const resultEv = events.find((e) => e.data.type === "mcp_tool_result")!.data;
    expect(resultEv).toMatchObject({ tool: "fail", is_error: true });
    expect(resultEv.result).toContain("something broke on the tool side");
    expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    expect(msgs.messages[1].metadata.tool_calls).toEqual([expect.objectContaining({ tool: "mcp__open_tools__fail", is_error: true })]);
  });

  it("local-extractive never calls MCP tools; a deleted registration leaves the chat working", async () => {
    const { org, auth, server, kb } = await chatWithServer();
    const { chat } = await newChat(auth, kb, { model: "local-extractive" });
    expectStatus(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [server.id] } }), 200);
    const events = await readSse(await streamMessage(chat.id, { content: "What is the refund policy?", model: "local-extractive", agent_mode: "deep" }, auth));
    expect(events.some((e) => e.data.type === "mcp_tool_call")).toBe(false);
    expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });

    expect((await call(`/mcp/servers/${server.id}?org_id=${org.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    // The deleted id is still stored in the first chat's settings: the turn neither fails nor offers its tools.
    const again = await readSse(await streamMessage(chat.id, ask("Refunds? @call mcp__open_tools__echo {\"text\":\"x\"}"), auth));
    expect(again.some((e) => e.data.type === "mcp_tool_call")).toBe(false);
    expect(again.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });
  });
});

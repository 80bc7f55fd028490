import { describe, expect, it } from "vitest";
import { kbWithDocument, newChat, readSse, streamMessage } from "../chats/chat-helpers";
import { call, createKey, expectError, expectStatus } from "../helpers";
import { connect } from "./helpers";

const cited = (msg: any) => {
  const byIndex = new Map(msg.metadata.sources.map((s: any) => [s.index, s]));
  return [...String(msg.content).matchAll(/\[(\d+)\]/g)].map((m) => byIndex.get(Number(m[1]))).filter(Boolean) as any[];
};

describe("connected apps in turns", () => {
  it("local-extractive in deep mode calls the app's search once and cites what it found, with the link", async () => {
    const { kb, auth } = await kbWithDocument();
    await connect(auth, "github");
    const { chat } = await newChat(auth, kb);
    const events = await readSse(
      await streamMessage(chat.id, { content: "What is the refund policy for annual plans?", model: "local-extractive", agent_mode: "deep", connector_slugs: ["github"] }, auth),
    );
    const calls = events.filter((e) => e.data.type === "mcp_tool_call");
    expect(calls.map((e) => e.data)).toEqual([expect.objectContaining({ server_id: null, connector_slug: "github", tool: "search", arguments: { query: "What is the refund policy for annual plans?" } })]);
    const results = events.filter((e) => e.data.type === "mcp_tool_result");
    expect(results).toHaveLength(1);
    expect(results[0].data).toMatchObject({ connector_slug: "github", tool: "search", is_error: false });
    expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });

    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    const answer = msgs.messages[1];
    const fromApp = cited(answer).filter((s) => s.url === "https://github.com/acme/alice-repo/issues/1");
    expect(fromApp.length, JSON.stringify(answer)).toBeGreaterThan(0);
    expect(fromApp[0].text).toContain("refunded within 30 days");
    expect(answer.metadata.tool_calls).toEqual([expect.objectContaining({ tool: "app__github__search", is_error: false })]);
  });

  it("a tool-calling model calls a connector tool and cites its result", async () => {
    const { kb, auth } = await kbWithDocument();
    await connect(auth, "notion");
    const { chat } = await newChat(auth, kb, { model: "test-gpt" });
    const r = expectStatus(
      await call(`/chats/${chat.id}/messages`, {
        ...auth,
        body: { content: 'Refunds for annual plans? @call app__notion__search {"query":"refund policy annual plans"}', model: "test-gpt", agent_mode: "deep", connector_slugs: ["notion"] },
      }),
      200,
    );
    const msg = r.assistant_message;
    expect(msg.metadata.tool_calls).toEqual([expect.objectContaining({ tool: "app__notion__search", is_error: false })]);
    const fromApp = cited(msg).filter((s) => String(s.url).startsWith("https://www.notion.so/Refund-policy-for-annual-plans"));
    expect(fromApp.length, JSON.stringify(msg)).toBe(1);
    expect(fromApp[0].text).toContain("refunded within 30 days");
  });

  it("connector_slugs naming an app that is not connected (or unknown) is refused up front with 400", async () => {
    const { kb, auth } = await kbWithDocument();
    await connect(auth, "github");
    const { chat } = await newChat(auth, kb);
    const r = await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: "Refunds?", model: "local-extractive", agent_mode: "deep", connector_slugs: ["github", "slack", "myspace"] } });
    const e = expectError(r, 400, "connector_not_connected");
    expect(e.message).toContain("slack");
    expect(e.message).toContain("myspace");
    // Nothing was said in the chat.
    expect(expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200).messages).toHaveLength(0);
    // Creating a chat with a first message is refused the same way.
    const created = await call("/chats", {
      ...auth,
      body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message: "Refunds?", connector_slugs: ["linear"] },
    });
    expectError(created, 400, "connector_not_connected");
  });

  it("an end user's chat uses that end user's connection only", async () => {
    const { org, kb } = await kbWithDocument();
    const key = await createKey(org, { scopes: ["query:rag", "connectors:read", "connectors:write", "documents:read"] });
    await connect({ key: key.key }, "linear", { tenant_id: org.tenantId, external_subject_id: "cust-1" });
    const ask = (subject: string) => ({ content: "What is the refund policy for annual plans?", model: "local-extractive", agent_mode: "deep", external_subject_id: subject, connector_slugs: ["linear"] });
    const mine = await newChat({ key: key.key }, kb, { external_subject_id: "cust-1" });
    const r = expectStatus(await call(`/chats/${mine.chat.id}/messages`, { key: key.key, body: ask("cust-1") }), 200);
    expect(cited(r.assistant_message).some((s) => s.url === "https://linear.app/acme/issue/ENG-1")).toBe(true);
    const theirs = await newChat({ key: key.key }, kb, { external_subject_id: "cust-2" });
    expectError(await call(`/chats/${theirs.chat.id}/messages`, { key: key.key, body: ask("cust-2") }), 400, "connector_not_connected");
  });

  it("a connection whose refresh fails gives an error tool result; the turn still answers", async () => {
    const { kb, auth } = await kbWithDocument();
    await connect(auth, "jira", {}, { test_expires_in: "30", test_refresh_error: "revoked" });
    const { chat } = await newChat(auth, kb);
    const events = await readSse(await streamMessage(chat.id, { content: "What is the refund policy?", model: "local-extractive", agent_mode: "deep", connector_slugs: ["jira"] }, auth));
    const result = events.find((e) => e.data.type === "mcp_tool_result")!;
    expect(result.data).toMatchObject({ connector_slug: "jira", tool: "search", is_error: true });
    expect(JSON.stringify(result.data.result)).toContain("connect it again");
    expect(events.at(-1)!.data).toMatchObject({ type: "done", status: "complete" });
    const st = expectStatus(await call("/connectors/status", { ...auth, body: { slugs: ["jira"] } }), 200);
    expect(st.statuses[0]).toMatchObject({ connected: false, reason: "revoked" });
  });
});

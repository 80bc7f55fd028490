import { describe, expect, it } from "vitest";
import { call, createKb, createKey, createOrg } from "../helpers";
import { newChat } from "./chat-helpers";

describe("chat endpoints never answer 5xx to malformed input", () => {
  it("junk bodies, junk queries, unknown ids", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const { chat } = await newChat({ cookie: org.owner.cookie }, kb);
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const junk: unknown[] = [null, [], "text", 42, {}, { content: 5 }, { content: "x", model: ["a"] }, { id: "💥", model: "local-extractive" },
      { content: "\u0000\uFFFF", model: "local-extractive", agent_mode: null }, { access_level: 1 }, { title: {} }, { images: "x" }];
    const targets: Array<[string, string]> = [
      ["/chats", "POST"],
      [`/chats/${chat.id}`, "PATCH"],
      [`/chats/${chat.id}/access`, "PATCH"],
      [`/chats/${chat.id}/messages`, "POST"],
      [`/chats/${chat.id}/messages/stream`, "POST"],
      [`/chats/${chat.id}/terminate`, "POST"],
      ["/chats/fast-query", "POST"],
      ["/chats/fast-raw-query", "POST"],
      ["/chats/raw-query", "POST"],
      ["/chats/follow-up-questions", "POST"],
      ["/chats/improve-prompt", "POST"],
      ["/chats/not-a-uuid/messages", "POST"],
    ];
    for (const auth of [{ cookie: org.owner.cookie }, { key }]) {
      for (const [path, method] of targets) {
        for (const body of junk) {
          const r = await call(path, { ...auth, method, body });
          expect(r.status, `${method} ${path} ${JSON.stringify(body)} -> ${JSON.stringify(r.body)}`).toBeLessThan(500);
        }
      }
    }
    for (const q of ["?tenant_id=", "?tenant_id=%00", `?tenant_id=${org.tenantId}&is_query=maybe`, `?tenant_id=${org.tenantId}&limit=-5`, "?tenant_id=x".repeat(50)]) {
      const r = await call(`/chats${q}`, { cookie: org.owner.cookie });
      expect(r.status, q).toBeLessThan(500);
    }
    for (const path of [`/chats/${"a".repeat(500)}/messages`, "/shared-chats/%ff", `/chats/${chat.id}/messages/${"x".repeat(300)}`]) {
      const r = await call(path, { cookie: org.owner.cookie });
      expect(r.status, path).toBeLessThan(500);
    }
  });
});

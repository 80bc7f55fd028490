import { describe, expect, it } from "vitest";
import { fetchWorker } from "../helpers";

describe("OpenAPI document: chats and billing", () => {
  it("lists every chat, shared-chat and usage route with its schemas", async () => {
    const doc: any = await (await fetchWorker("/openapi.json")).json();
    const expected: Array<[string, string]> = [
      ["/api/v1/chats", "get"],
      ["/api/v1/chats", "post"],
      ["/api/v1/chats/models", "get"],
      ["/api/v1/chats/{id}", "patch"],
      ["/api/v1/chats/{id}", "delete"],
      ["/api/v1/chats/{id}/access", "patch"],
      ["/api/v1/chats/{id}/todo", "get"],
      ["/api/v1/chats/{id}/messages", "get"],
      ["/api/v1/chats/{id}/messages", "post"],
      ["/api/v1/chats/{id}/messages/stream", "post"],
      ["/api/v1/chats/{id}/stop", "post"],
      ["/api/v1/chats/{id}/messages/{messageId}", "delete"],
      ["/api/v1/chats/{id}/terminate", "post"],
      ["/api/v1/chats/improve-prompt", "post"],
      ["/api/v1/chats/follow-up-questions", "post"],
      ["/api/v1/chats/fast-query", "post"],
      ["/api/v1/chats/fast-raw-query", "post"],
      ["/api/v1/chats/raw-query", "post"],
      ["/api/v1/shared-chats/{id}", "get"],
      ["/api/v1/billing/tenants/{tenantId}/usage/summary", "get"],
      ["/api/v1/billing/tenants/{tenantId}/usage/logs", "get"],
      ["/api/v1/billing/organizations/{orgId}/usage/summary", "get"],
      ["/api/v1/billing/organizations/{orgId}/usage/logs", "get"],
    ];
    for (const [path, method] of expected) {
      const op = doc.paths?.[path]?.[method];
      expect(op, `${method.toUpperCase()} ${path}`).toBeTruthy();
      expect(op.operationId).toBeTruthy();
    }
    const ids = Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((o: any) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths["/api/v1/chats"].post.requestBody.content["application/json"].schema).toBeTruthy();
    expect(doc.components.schemas.Message).toBeTruthy();
    expect(doc.components.schemas.UsageLog).toBeTruthy();
  });
});

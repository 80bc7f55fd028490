import { describe, expect, it } from "vitest";
import { fetchWorker } from "../helpers";

describe("OpenAPI document: skills and artifacts", () => {
  it("documents every skills and artifacts route with its security", async () => {
    const res = await fetchWorker("/openapi.json");
    expect(res.status).toBe(200);
    const doc: any = await res.json();
    const expected: Array<[string, string, "userOrKey" | "userOnly"]> = [
      ["/api/v1/skills", "get", "userOrKey"],
      ["/api/v1/skills", "post", "userOrKey"],
      ["/api/v1/skills/{id}", "get", "userOrKey"],
      ["/api/v1/skills/{id}", "patch", "userOrKey"],
      ["/api/v1/skills/{id}", "delete", "userOrKey"],
      ["/api/v1/skills/catalog", "get", "userOrKey"],
      ["/api/v1/skills/catalog/{id}/favorite", "post", "userOrKey"],
      ["/api/v1/skills/catalog/{id}/favorite", "delete", "userOrKey"],
      ["/api/v1/skills/catalog/{id}/install", "post", "userOrKey"],
      ["/api/v1/knowledge-bases/{id}/artifacts", "get", "userOrKey"],
      ["/api/v1/knowledge-bases/{id}/artifacts", "post", "userOrKey"],
      ["/api/v1/artifacts/{id}", "get", "userOrKey"],
      ["/api/v1/artifacts/{id}", "patch", "userOrKey"],
      ["/api/v1/artifacts/{id}/archive", "post", "userOrKey"],
      ["/api/v1/artifacts/{id}/restore", "post", "userOrKey"],
      ["/api/v1/artifacts/{id}/revisions", "get", "userOrKey"],
      ["/api/v1/artifacts/{id}/publish", "post", "userOnly"],
      ["/api/v1/artifacts/{id}/publish", "delete", "userOnly"],
    ];
    const ids = new Set<string>();
    for (const [path, method, security] of expected) {
      const op = doc.paths?.[path]?.[method];
      expect(op, `${method} ${path}`).toBeTruthy();
      expect(op.operationId).toBeTruthy();
      ids.add(op.operationId);
      const schemes = (op.security as Record<string, string[]>[]).map((s) => Object.keys(s)[0]).sort();
      expect(schemes).toEqual(security === "userOnly" ? ["sessionCookie"] : ["bearerAuth", "sessionCookie"]);
    }
    expect(ids.size).toBe(expected.length);
    expect(doc.components.schemas).toHaveProperty("Skill");
    expect(doc.components.schemas).toHaveProperty("SkillCatalogTemplate");
    expect(doc.components.schemas).toHaveProperty("Artifact");
    expect(doc.components.schemas).toHaveProperty("ArtifactRevision");
  });
});

import { describe, expect, it } from "vitest";
import { call, createOrg, expectError, fetchWorker, signup } from "../helpers";

describe("smoke", () => {
  it("serves health and 404s in the error shape", async () => {
    const h = await fetchWorker("/health");
    expect(h.status).toBe(200);
    const r = await call("/nope");
    expectError(r, 404, "not_found");
  });

  it("signs up and creates an organization", async () => {
    const u = await signup();
    const org = await createOrg(u);
    const me = await call("/me", { cookie: u.cookie });
    expect(me.status).toBe(200);
    expect(me.body.organizations[0].id).toBe(org.id);
  });
});

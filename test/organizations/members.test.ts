import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addMember, call, createOrg, expectError, expectStatus, signup } from "../helpers";

describe("members and invitations", () => {
  it("owner invites; the invitee sees and accepts it; the member list shows both states", async () => {
    const org = await createOrg();
    const invitee = await signup();
    const inv = expectStatus(
      await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: invitee.email.toUpperCase(), role: "developer" } }),
      201,
    );
    expect(inv).toMatchObject({ email: invitee.email, role: "developer", status: "pending", organization_id: org.id });
    const days = (Date.parse(inv.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const listed = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie }), 200);
    expect(listed.invitations.map((i: any) => i.id)).toEqual([inv.id]);

    const mine = expectStatus(await call("/invitations", { cookie: invitee.cookie }), 200);
    expect(mine.invitations).toEqual([expect.objectContaining({ id: inv.id, organization_name: `Org ${org.slug}` })]);

    const acc = expectStatus(await call(`/invitations/${inv.id}/accept`, { cookie: invitee.cookie, method: "POST" }), 200);
    expect(acc.organization).toMatchObject({ id: org.id, role: "developer" });
    const after = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: invitee.cookie }), 200);
    expect(after.members.map((m: any) => m.role).sort()).toEqual(["developer", "owner"]);
    expect(after.invitations).toEqual([]);
    expectError(await call(`/invitations/${inv.id}/accept`, { cookie: invitee.cookie, method: "POST" }), 409);
  });

  it("defaults the invited role to viewer and refuses owner or unknown roles", async () => {
    const org = await createOrg();
    const inv = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: "v@example.com" } }), 201);
    expect(inv.role).toBe("viewer");
    expectError(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: "o@example.com", role: "owner" } }), 400);
    expectError(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: "o@example.com", role: "god" } }), 400);
    expectError(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: "v@example.com" } }), 409, "invitation_pending");
    expectError(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: org.owner.email } }), 409, "already_member");
  });

  it("only the owner manages members; others get 403", async () => {
    const org = await createOrg();
    for (const role of ["billing_admin", "developer", "viewer"] as const) {
      const m = await addMember(org, role);
      expectError(await call(`/organizations/${org.id}/members`, { cookie: m.cookie, body: { email: "x@example.com" } }), 403, "forbidden");
      expectError(await call(`/organizations/${org.id}/members/role`, { cookie: m.cookie, body: { user_id: m.id, role: "owner" } }), 403);
      expectError(await call(`/organizations/${org.id}/members/${m.id}`, { cookie: m.cookie, method: "DELETE" }), 403);
      // Any member may read the member list.
      expectStatus(await call(`/organizations/${org.id}/members`, { cookie: m.cookie }), 200);
    }
  });

  it("refuses acceptance by another email (403), after revocation or expiry (409)", async () => {
    const org = await createOrg();
    const invitee = await signup();
    const stranger = await signup();
    const inv = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: invitee.email } }), 201);
    expectError(await call(`/invitations/${inv.id}/accept`, { cookie: stranger.cookie, method: "POST" }), 403, "forbidden");

    expect((await call(`/organizations/${org.id}/invites/${inv.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/invitations/${inv.id}/accept`, { cookie: invitee.cookie, method: "POST" }), 409, "invitation_revoked");
    expectError(await call(`/organizations/${org.id}/invites/${inv.id}`, { cookie: org.owner.cookie, method: "DELETE" }), 409);

    const inv2 = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: invitee.email } }), 201);
    await env.DB.prepare("UPDATE invitations SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), inv2.id).run();
    expectError(await call(`/invitations/${inv2.id}/accept`, { cookie: invitee.cookie, method: "POST" }), 409, "invitation_expired");
    const listed = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie }), 200);
    expect(listed.invitations).toEqual([]);
    expectError(await call(`/invitations/inv_nope/accept`, { cookie: invitee.cookie, method: "POST" }), 404);
  });

  it("role changes apply at once, and the last owner cannot be demoted or removed", async () => {
    const org = await createOrg();
    const dev = await addMember(org, "developer");
    expectError(await call(`/organizations/${org.id}`, { cookie: dev.cookie, method: "PATCH", body: { name: "x" } }), 403);
    const changed = expectStatus(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: dev.id, role: "billing_admin" } }), 200);
    expect(changed).toMatchObject({ user_id: dev.id, role: "billing_admin" });
    expectStatus(await call(`/organizations/${org.id}`, { cookie: dev.cookie, method: "PATCH", body: { name: "x" } }), 200);

    expectError(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: org.owner.id, role: "viewer" } }), 409, "last_owner");
    expectError(await call(`/organizations/${org.id}/members/${org.owner.id}`, { cookie: org.owner.cookie, method: "DELETE" }), 409, "last_owner");
    expectError(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: "usr_nobody", role: "viewer" } }), 404);

    // With a second owner, the first may step down.
    expectStatus(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: dev.id, role: "owner" } }), 200);
    expectStatus(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: org.owner.id, role: "viewer" } }), 200);
    expectError(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: "z@example.com" } }), 403);
  });

  it("removing a member revokes access immediately", async () => {
    const org = await createOrg();
    const dev = await addMember(org, "developer");
    expectStatus(await call(`/organizations/${org.id}`, { cookie: dev.cookie }), 200);
    const members = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie }), 200);
    const memberId = members.members.find((m: any) => m.user_id === dev.id).member_id;
    expect((await call(`/organizations/${org.id}/members/${memberId}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/organizations/${org.id}`, { cookie: dev.cookie }), 404);
    expectError(await call(`/tenants/${org.tenantId}`, { cookie: dev.cookie }), 404);
    expectError(await call(`/organizations/${org.id}/members/${memberId}`, { cookie: org.owner.cookie, method: "DELETE" }), 404);
  });
});

import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { forgetMemberships, requireUser } from "../../auth/authorize";
import { jsonBody, jsonContent, noContent, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { acceptInvitation, changeRoleOf, inviteAndNotify, listInvitationsForEmail, listMembers, publicInvitation, removeMember, revokeInvitation } from "../../services/members";
import { organizationFor, publicOrganization } from "../../services/organizations";
import { InvitationSchema, InviteBody, MemberSchema, MembersSchema, OrganizationSchema, RoleBody } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Members"]);

export const memberRoutes = createRouter();

const listMembersRoute = route("get", "/organizations/{id}/members", "members:read", {
  operationId: "listMembers", summary: "Active members with roles, and pending invitations",
  responses: { 200: jsonContent(MembersSchema, "Members and pending invitations") },
});
memberRoutes.openapi(listMembersRoute, async (c) => {
  const { organization } = await organizationFor(ctxOf(c), c.req.valid("param").id, "members:read");
  return c.json(await listMembers(c.get("db"), organization.id), 200);
});

const invite = route("post", "/organizations/{id}/members", "members:manage", {
  operationId: "inviteMember", summary: "Invite someone by email (owner only)",
  description:
    "Creates a pending invitation that expires after 7 days; the invitee accepts it with " +
    "`POST /invitations/{id}/accept` after signing in with that email. Ownership is assigned separately, " +
    "through the role endpoint, after the user joins.",
  request: { body: jsonBody(InviteBody) }, responses: { 201: jsonContent(InvitationSchema, "The pending invitation") },
});
memberRoutes.openapi(invite, async (c) => {
  const user = requireUser(ctxOf(c));
  const { organization } = await organizationFor(ctxOf(c), c.req.valid("param").id, "members:manage");
  const inv = await inviteAndNotify(ctxOf(c), organization, c.req.valid("json"), user.user);
  return c.json(publicInvitation(inv), 201);
});

const setRole = route("post", "/organizations/{id}/members/role", "members:manage", {
  operationId: "setMemberRole", summary: "Change a member's role (owner only)",
  description: "The last owner cannot be demoted (409 `last_owner`).", request: { body: jsonBody(RoleBody) },
  responses: { 200: jsonContent(MemberSchema, "The member with the new role") },
});
memberRoutes.openapi(setRole, async (c) => {
  const { organization } = await organizationFor(ctxOf(c), c.req.valid("param").id, "members:manage");
  return c.json(await changeRoleOf(ctxOf(c), organization.id, c.req.valid("json")), 200);
});

const removeMemberRoute = route("delete", "/organizations/{id}/members/{member_id}", "members:manage", {
  operationId: "removeMember", summary: "Remove a member (owner only); access is revoked immediately",
  responses: { 204: noContent },
});
memberRoutes.openapi(removeMemberRoute, async (c) => {
  const { id, member_id } = c.req.valid("param");
  const { organization } = await organizationFor(ctxOf(c), id, "members:manage");
  await removeMember(c.get("db"), organization.id, member_id);
  return c.body(null, 204);
});

const revokeInvite = route("delete", "/organizations/{id}/invites/{invite_id}", "members:manage", {
  operationId: "revokeInvitation", summary: "Cancel a pending invitation (owner only)", responses: { 204: noContent },
});
memberRoutes.openapi(revokeInvite, async (c) => {
  const { id, invite_id } = c.req.valid("param");
  const { organization } = await organizationFor(ctxOf(c), id, "members:manage");
  await revokeInvitation(c.get("db"), organization.id, invite_id);
  return c.body(null, 204);
});

const myInvitations = route("get", "/invitations", "authenticated", {
  operationId: "listMyInvitations", summary: "Pending invitations addressed to the signed-in user's email",
  responses: { 200: jsonContent(z.object({ invitations: z.array(InvitationSchema) }), "Invitations") },
  security: userOnly,
});
memberRoutes.openapi(myInvitations, async (c) => {
  const user = requireUser(ctxOf(c));
  const rows = await listInvitationsForEmail(c.get("db"), user.user.email);
  return c.json({ invitations: rows.map((r) => publicInvitation(r.invitation, r.organization)) }, 200);
});

const accept = route("post", "/invitations/{id}/accept", "authenticated", {
  operationId: "acceptInvitation", summary: "Accept an invitation and join the organization",
  description: "The signed-in user's email must match (403). Expired, revoked or already accepted invitations: 409.",
  responses: {
    200: jsonContent(
      z.object({ organization: OrganizationSchema, member_id: z.string() }),
      "The organization joined, with the granted role",
    ),
  },
  security: userOnly,
});
memberRoutes.openapi(accept, async (c) => {
  const user = requireUser(ctxOf(c));
  const result = await acceptInvitation(c.get("db"), user.user, c.req.valid("param").id);
  forgetMemberships(user);
  return c.json({ organization: publicOrganization(result.organization, result.role), member_id: result.memberId }, 200);
});

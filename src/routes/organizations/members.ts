import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { forgetMemberships, requireUser } from "../../auth/authorize";
import { errorResponses, jsonBody, jsonContent, noContent, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import {
  acceptInvitation,
  changeRole,
  inviteAndNotify,
  listInvitationsForEmail,
  listMembers,
  memberView,
  organizationFor,
  publicInvitation,
  publicOrganization,
  removeMember,
  revokeInvitation,
} from "../../services/organizations";
import {
  InvitationSchema,
  InviteBody,
  InviteParams,
  MemberParams,
  MemberSchema,
  MembersSchema,
  OrganizationSchema,
  OrgIdParam,
  RoleBody,
} from "./schemas";

const tags = ["Members"];

export const memberRoutes = createRouter();

const listMembersRoute = createRoute({
  method: "get",
  path: "/organizations/{id}/members",
  tags,
  operationId: "listMembers",
  ...routePermission("members:read"),
  summary: "Active members with roles, and pending invitations",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: { 200: jsonContent(MembersSchema, "Members and pending invitations"), ...errorResponses },
});
memberRoutes.openapi(listMembersRoute, async (c) => {
  const { organization } = await organizationFor(c, c.req.valid("param").id, "members:read");
  return c.json(await listMembers(c.get("db"), organization.id), 200);
});

const invite = createRoute({
  method: "post",
  path: "/organizations/{id}/members",
  tags,
  operationId: "inviteMember",
  ...routePermission("members:manage"),
  summary: "Invite someone by email (owner only)",
  description:
    "Creates a pending invitation that expires after 7 days; the invitee accepts it with " +
    "`POST /invitations/{id}/accept` after signing in with that email. Ownership is assigned separately, " +
    "through the role endpoint, after the user joins.",
  security: userOnly,
  request: { params: OrgIdParam, body: jsonBody(InviteBody) },
  responses: { 201: jsonContent(InvitationSchema, "The pending invitation"), ...errorResponses },
});
memberRoutes.openapi(invite, async (c) => {
  const user = requireUser(c);
  const { organization } = await organizationFor(c, c.req.valid("param").id, "members:manage");
  const inv = await inviteAndNotify(c, organization, c.req.valid("json"), user.user);
  return c.json(publicInvitation(inv), 201);
});

const setRole = createRoute({
  method: "post",
  path: "/organizations/{id}/members/role",
  tags,
  operationId: "setMemberRole",
  ...routePermission("members:manage"),
  summary: "Change a member's role (owner only)",
  description: "The last owner cannot be demoted (409 `last_owner`).",
  security: userOnly,
  request: { params: OrgIdParam, body: jsonBody(RoleBody) },
  responses: { 200: jsonContent(MemberSchema, "The member with the new role"), ...errorResponses },
});
memberRoutes.openapi(setRole, async (c) => {
  const caller = requireUser(c);
  const { user_id, role } = c.req.valid("json");
  const { organization } = await organizationFor(c, c.req.valid("param").id, "members:manage");
  const db = c.get("db");
  const member = await changeRole(db, organization.id, user_id, role);
  forgetMemberships(caller);
  return c.json(await memberView(db, member), 200);
});

const removeMemberRoute = createRoute({
  method: "delete",
  path: "/organizations/{id}/members/{member_id}",
  tags,
  operationId: "removeMember",
  ...routePermission("members:manage"),
  summary: "Remove a member (owner only); access is revoked immediately",
  security: userOnly,
  request: { params: MemberParams },
  responses: { 204: noContent, ...errorResponses },
});
memberRoutes.openapi(removeMemberRoute, async (c) => {
  const { id, member_id } = c.req.valid("param");
  const { organization } = await organizationFor(c, id, "members:manage");
  await removeMember(c.get("db"), organization.id, member_id);
  return c.body(null, 204);
});

const revokeInvite = createRoute({
  method: "delete",
  path: "/organizations/{id}/invites/{invite_id}",
  tags,
  operationId: "revokeInvitation",
  ...routePermission("members:manage"),
  summary: "Cancel a pending invitation (owner only)",
  security: userOnly,
  request: { params: InviteParams },
  responses: { 204: noContent, ...errorResponses },
});
memberRoutes.openapi(revokeInvite, async (c) => {
  const { id, invite_id } = c.req.valid("param");
  const { organization } = await organizationFor(c, id, "members:manage");
  await revokeInvitation(c.get("db"), organization.id, invite_id);
  return c.body(null, 204);
});

const myInvitations = createRoute({
  method: "get",
  path: "/invitations",
  tags,
  operationId: "listMyInvitations",
  ...routePermission("authenticated"),
  summary: "Pending invitations addressed to the signed-in user's email",
  security: userOnly,
  responses: { 200: jsonContent(z.object({ invitations: z.array(InvitationSchema) }), "Invitations"), ...errorResponses },
});
memberRoutes.openapi(myInvitations, async (c) => {
  const user = requireUser(c);
  const rows = await listInvitationsForEmail(c.get("db"), user.user.email);
  return c.json({ invitations: rows.map((r) => publicInvitation(r.invitation, r.organization)) }, 200);
});

const accept = createRoute({
  method: "post",
  path: "/invitations/{id}/accept",
  tags,
  operationId: "acceptInvitation",
  ...routePermission("authenticated"),
  summary: "Accept an invitation and join the organization",
  description: "The signed-in user's email must match (403). Expired, revoked or already accepted invitations: 409.",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: {
    200: jsonContent(
      z.object({ organization: OrganizationSchema, member_id: z.string() }),
      "The organization joined, with the granted role",
    ),
    ...errorResponses,
  },
});
memberRoutes.openapi(accept, async (c) => {
  const user = requireUser(c);
  const result = await acceptInvitation(c.get("db"), user.user, c.req.valid("param").id);
  forgetMemberships(user);
  return c.json({ organization: publicOrganization(result.organization, result.role), member_id: result.memberId }, 200);
});

import { createRoute, z } from "@hono/zod-openapi";
import { authorize, forgetMemberships, requireUser } from "../../auth/authorize";
import { config } from "../../lib/config";
import { errorResponses, jsonBody, jsonContent, noContent, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { sendEmail } from "../../services/email";
import {
  acceptInvitation,
  changeRole,
  getOrganization,
  inviteMember,
  listInvitationsForEmail,
  listMembers,
  memberView,
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

const listMembersRoute = createRoute({
  method: "get",
  path: "/organizations/{id}/members",
  tags,
  operationId: "listMembers",
  summary: "Active members with roles, and pending invitations",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: { 200: jsonContent(MembersSchema, "Members and pending invitations"), ...errorResponses },
});

const invite = createRoute({
  method: "post",
  path: "/organizations/{id}/members",
  tags,
  operationId: "inviteMember",
  summary: "Invite someone by email (owner only)",
  description:
    "Creates a pending invitation that expires after 7 days; the invitee accepts it with " +
    "`POST /invitations/{id}/accept` after signing in with that email. Ownership is assigned separately, " +
    "through the role endpoint, after the user joins.",
  security: userOnly,
  request: { params: OrgIdParam, body: jsonBody(InviteBody) },
  responses: { 201: jsonContent(InvitationSchema, "The pending invitation"), ...errorResponses },
});

const setRole = createRoute({
  method: "post",
  path: "/organizations/{id}/members/role",
  tags,
  operationId: "setMemberRole",
  summary: "Change a member's role (owner only)",
  description: "The last owner cannot be demoted (409 `last_owner`).",
  security: userOnly,
  request: { params: OrgIdParam, body: jsonBody(RoleBody) },
  responses: { 200: jsonContent(MemberSchema, "The member with the new role"), ...errorResponses },
});

const removeMemberRoute = createRoute({
  method: "delete",
  path: "/organizations/{id}/members/{member_id}",
  tags,
  operationId: "removeMember",
  summary: "Remove a member (owner only); access is revoked immediately",
  security: userOnly,
  request: { params: MemberParams },
  responses: { 204: noContent, ...errorResponses },
});

const revokeInvite = createRoute({
  method: "delete",
  path: "/organizations/{id}/invites/{invite_id}",
  tags,
  operationId: "revokeInvitation",
  summary: "Cancel a pending invitation (owner only)",
  security: userOnly,
  request: { params: InviteParams },
  responses: { 204: noContent, ...errorResponses },
});

const myInvitations = createRoute({
  method: "get",
  path: "/invitations",
  tags,
  operationId: "listMyInvitations",
  summary: "Pending invitations addressed to the signed-in user's email",
  security: userOnly,
  responses: { 200: jsonContent(z.object({ invitations: z.array(InvitationSchema) }), "Invitations"), ...errorResponses },
});

const accept = createRoute({
  method: "post",
  path: "/invitations/{id}/accept",
  tags,
  operationId: "acceptInvitation",
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

export const memberRoutes = createRouter()
  .openapi(listMembersRoute, async (c) => {
    requireUser(c);
    const { id } = c.req.valid("param");
    await authorize(c, "members:read", { organizationId: id }, { what: "Organization" });
    return c.json(await listMembers(c.get("db"), id), 200);
  })
  .openapi(invite, async (c) => {
    const user = requireUser(c);
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await authorize(c, "members:manage", { organizationId: id }, { what: "Organization" });
    const db = c.get("db");
    const inv = await inviteMember(db, id, body, user.user.id);
    const org = await getOrganization(db, id);
    const base = config(c.env).publicBaseUrl;
    c.executionCtx.waitUntil(
      sendEmail(c.env, {
        to: inv.email,
        subject: `You are invited to ${org?.name ?? "an organization"}`,
        text:
          `${user.user.email} invited you to join ${org?.name} as ${inv.role}.\n` +
          `Sign in (or sign up) at ${base} with this email, then accept with:\n` +
          `POST ${base}/api/v1/invitations/${inv.id}/accept\n` +
          `The invitation expires at ${inv.expiresAt}.`,
      }).catch((e) => console.error("invitation email failed", e)),
    );
    return c.json(publicInvitation(inv), 201);
  })
  .openapi(setRole, async (c) => {
    const caller = requireUser(c);
    const { id } = c.req.valid("param");
    const { user_id, role } = c.req.valid("json");
    await authorize(c, "members:manage", { organizationId: id }, { what: "Organization" });
    const db = c.get("db");
    const member = await changeRole(db, id, user_id, role);
    forgetMemberships(caller);
    return c.json(await memberView(db, member), 200);
  })
  .openapi(removeMemberRoute, async (c) => {
    requireUser(c);
    const { id, member_id } = c.req.valid("param");
    await authorize(c, "members:manage", { organizationId: id }, { what: "Organization" });
    await removeMember(c.get("db"), id, member_id);
    return c.body(null, 204);
  })
  .openapi(revokeInvite, async (c) => {
    requireUser(c);
    const { id, invite_id } = c.req.valid("param");
    await authorize(c, "members:manage", { organizationId: id }, { what: "Organization" });
    await revokeInvitation(c.get("db"), id, invite_id);
    return c.body(null, 204);
  })
  .openapi(myInvitations, async (c) => {
    const user = requireUser(c);
    const rows = await listInvitationsForEmail(c.get("db"), user.user.email);
    return c.json({ invitations: rows.map((r) => publicInvitation(r.invitation, r.organization)) }, 200);
  })
  .openapi(accept, async (c) => {
    const user = requireUser(c);
    const { id } = c.req.valid("param");
    const result = await acceptInvitation(c.get("db"), user.user, id);
    forgetMemberships(user);
    return c.json({ organization: publicOrganization(result.organization, result.role), member_id: result.memberId }, 200);
  });

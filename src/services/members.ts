import { forgetMemberships } from "../auth/authorize";
import type { ServiceContext } from "../contracts/context";
import { sendEmail } from "./email";
import { isUniqueViolation } from "../db/errors";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { invitations, organizationMembers, organizations, users, type Invitation, type Membership, type Organization, type Role, type User } from "../db/schema";
import { config } from "../lib/config";
import { conflict, forbidden, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { DAY_MS, isoIn, nowIso } from "../lib/time";

/** Members of an organization, their roles, and invitations to join it. */

export const INVITATION_TTL_MS = 7 * DAY_MS;

export function invitationStatus(inv: Invitation): Invitation["status"] {
  return inv.status === "pending" && Date.parse(inv.expiresAt) <= Date.now() ? "expired" : inv.status;
}

export function publicInvitation(inv: Invitation, org?: Organization) {
  return {
    id: inv.id,
    organization_id: inv.organizationId,
    ...(org ? { organization_name: org.name } : {}),
    email: inv.email,
    role: inv.role,
    status: invitationStatus(inv),
    expires_at: inv.expiresAt,
    created_at: inv.createdAt,
  };
}

export async function listMembers(db: Database, organizationId: string) {
  const members = await db
    .select({
      member_id: organizationMembers.id,
      user_id: users.id,
      email: users.email,
      name: users.name,
      role: organizationMembers.role,
      joined_at: organizationMembers.createdAt,
    })
    .from(organizationMembers)
    .innerJoin(users, eq(users.id, organizationMembers.userId))
    .where(eq(organizationMembers.organizationId, organizationId))
    .orderBy(asc(organizationMembers.createdAt))
    .all();
  const pending = await db
    .select()
    .from(invitations)
    .where(
      and(
        eq(invitations.organizationId, organizationId),
        eq(invitations.status, "pending"),
        gt(invitations.expiresAt, nowIso()),
      ),
    )
    .orderBy(asc(invitations.createdAt))
    .all();
  return { members, invitations: pending.map((i) => publicInvitation(i)) };
}

export async function inviteMember(
  db: Database,
  organizationId: string,
  input: { email: string; role: Invitation["role"] },
  invitedBy: string,
): Promise<Invitation> {
  const email = input.email.trim().toLowerCase();
  const member = await db
    .select({ id: organizationMembers.id })
    .from(organizationMembers)
    .innerJoin(users, eq(users.id, organizationMembers.userId))
    .where(and(eq(organizationMembers.organizationId, organizationId), eq(users.email, email)))
    .get();
  if (member) throw conflict("already_member", `${email} is already a member of this organization`);
  const open = await db
    .select({ id: invitations.id })
    .from(invitations)
    .where(
      and(
        eq(invitations.organizationId, organizationId),
        eq(invitations.email, email),
        eq(invitations.status, "pending"),
        gt(invitations.expiresAt, nowIso()),
      ),
    )
    .get();
  if (open) throw conflict("invitation_pending", `${email} already has a pending invitation (${open.id})`);
  const now = nowIso();
  const inv: Invitation = {
    id: newId("inv"),
    organizationId,
    email,
    role: input.role,
    status: "pending",
    invitedBy,
    acceptedBy: null,
    expiresAt: isoIn(INVITATION_TTL_MS),
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(invitations).values(inv);
  return inv;
}

/**
 * POST /organizations/{id}/members: the invitation, and an email to the invitee
 * sent after the response (a mail relay failure is logged, never the caller's).
 */
export async function inviteAndNotify(
  ctx: ServiceContext,
  organization: Organization,
  input: { email: string; role: Invitation["role"] },
  inviter: User,
): Promise<Invitation> {
  const inv = await inviteMember(ctx.db, organization.id, input, inviter.id);
  const base = config(ctx.env).publicBaseUrl;
  ctx.waitUntil(
    sendEmail(ctx.env, {
      to: inv.email,
      subject: `You are invited to ${organization.name}`,
      text:
        `${inviter.email} invited you to join ${organization.name} as ${inv.role}.\n` +
        `Sign in (or sign up) at ${base} with this email, then accept with:\n` +
        `POST ${base}/api/v1/invitations/${inv.id}/accept\n` +
        `The invitation expires at ${inv.expiresAt}.`,
    }).catch((e) => console.error("invitation email failed", e)),
  );
  return inv;
}

export async function findMember(db: Database, organizationId: string, memberOrUserId: string) {
  // Accept either the membership id (mem_...) or the user id (usr_...).
  const column = memberOrUserId.startsWith("usr_") ? organizationMembers.userId : organizationMembers.id;
  return db
    .select()
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, organizationId), eq(column, memberOrUserId)))
    .get();
}

export async function memberView(db: Database, member: Membership) {
  const u = await db.select({ email: users.email, name: users.name }).from(users).where(eq(users.id, member.userId)).get();
  return {
    member_id: member.id,
    user_id: member.userId,
    email: u?.email ?? "",
    name: u?.name ?? null,
    role: member.role,
    joined_at: member.createdAt,
  };
}

/** Owners remaining if this membership stopped being an owner. */
const otherOwnersExist = (organizationId: string, membershipId: string) => sql`(
  SELECT COUNT(*) FROM organization_members
  WHERE organization_id = ${organizationId} AND role = 'owner' AND id != ${membershipId}
) > 0`;

export async function changeRole(db: Database, organizationId: string, userId: string, role: Role) {
  const member = await findMember(db, organizationId, userId);
  if (!member) throw notFound("Member");
  if (member.role === role) return member;
  // Single statement: demoting the last owner is impossible even under concurrency.
  const updated = await db
    .update(organizationMembers)
    .set({ role, updatedAt: nowIso() })
    .where(
      and(
        eq(organizationMembers.id, member.id),
        sql`(${organizationMembers.role} != 'owner' OR ${otherOwnersExist(organizationId, member.id)})`,
      ),
    )
    .returning()
    .get();
  if (!updated) throw conflict("last_owner", "An organization must keep at least one owner");
  return updated;
}

/** Gives a member another role (the last owner cannot be demoted: 409) and answers the member as now stored. */
export async function changeRoleOf(ctx: ServiceContext, organizationId: string, input: { user_id: string; role: Role }) {
  const db = ctx.db;
  const member = await changeRole(db, organizationId, input.user_id, input.role);
  // The caller may have changed their own role: this request must not keep the old one.
  forgetMemberships(ctx.caller);
  return memberView(db, member);
}

export async function removeMember(db: Database, organizationId: string, memberOrUserId: string) {
  const member = await findMember(db, organizationId, memberOrUserId);
  if (!member) throw notFound("Member");
  const removed = await db
    .delete(organizationMembers)
    .where(
      and(
        eq(organizationMembers.id, member.id),
        sql`(${organizationMembers.role} != 'owner' OR ${otherOwnersExist(organizationId, member.id)})`,
      ),
    )
    .returning({ id: organizationMembers.id })
    .get();
  if (!removed) throw conflict("last_owner", "An organization must keep at least one owner");
}

function refuseUnlessPending(inv: Invitation) {
  const status = invitationStatus(inv);
  if (status === "expired") throw conflict("invitation_expired", "This invitation has expired");
  if (status === "revoked") throw conflict("invitation_revoked", "This invitation has been revoked");
  if (status === "accepted") throw conflict("invitation_accepted", "This invitation has already been accepted");
}

export async function revokeInvitation(db: Database, organizationId: string, invitationId: string) {
  const inv = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.id, invitationId), eq(invitations.organizationId, organizationId)))
    .get();
  if (!inv) throw notFound("Invitation");
  refuseUnlessPending(inv);
  await db
    .update(invitations)
    .set({ status: "revoked", updatedAt: nowIso() })
    .where(and(eq(invitations.id, inv.id), eq(invitations.status, "pending")));
}

export async function listInvitationsForEmail(db: Database, email: string) {
  return db
    .select({ invitation: invitations, organization: organizations })
    .from(invitations)
    .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
    .where(and(eq(invitations.email, email), eq(invitations.status, "pending"), gt(invitations.expiresAt, nowIso())))
    .orderBy(asc(invitations.createdAt))
    .all();
}

export async function acceptInvitation(db: Database, user: User, invitationId: string) {
  const row = await db
    .select({ invitation: invitations, organization: organizations })
    .from(invitations)
    .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
    .where(eq(invitations.id, invitationId))
    .get();
  // Invitations for someone else are not revealed to non-invitees beyond "not yours".
  if (!row) throw notFound("Invitation");
  const { invitation: inv, organization: org } = row;
  if (inv.email !== user.email) throw forbidden("This invitation was sent to a different email address");
  refuseUnlessPending(inv);
  const existing = await findMember(db, org.id, user.id);
  if (existing) throw conflict("already_member", "You are already a member of this organization");
  const now = nowIso();
  const memberId = newId("mem");
  try {
    // One transaction: claim the invitation, and insert the membership only if
    // this request was the one that claimed it (changes() of the UPDATE).
    const d1 = db.$client;
    const [claimed] = await d1.batch([
      d1
        .prepare(
          "UPDATE invitations SET status = 'accepted', accepted_by = ?1, updated_at = ?2 " +
            "WHERE id = ?3 AND status = 'pending' AND expires_at > ?2",
        )
        .bind(user.id, now, inv.id),
      d1
        .prepare(
          "INSERT INTO organization_members (id, organization_id, user_id, role, created_at, updated_at) " +
            "SELECT ?1, ?2, ?3, ?4, ?5, ?5 WHERE changes() = 1",
        )
        .bind(memberId, org.id, user.id, inv.role, now),
    ]);
    if (!claimed.meta.changes) throw conflict("invitation_accepted", "This invitation is no longer pending");
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict("already_member", "You are already a member of this organization");
    throw e;
  }
  return { organization: org, role: inv.role as Role, memberId };
}

/** Cron housekeeping: mark pending invitations past their expiry. */
export async function expireInvitations(db: Database): Promise<void> {
  const now = nowIso();
  await db
    .update(invitations)
    .set({ status: "expired", updatedAt: now })
    .where(and(eq(invitations.status, "pending"), sql`${invitations.expiresAt} <= ${now}`));
}

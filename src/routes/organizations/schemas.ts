import { z } from "@hono/zod-openapi";
import { INVITABLE_ROLES, ORG_STATUSES, ORG_TYPES, ROLES } from "../../db/schema";
import { Timestamp } from "../../lib/openapi";

export const SLUG_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export const OrganizationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    type: z.enum(ORG_TYPES),
    status: z.enum(ORG_STATUSES),
    role: z.enum(ROLES).optional().openapi({ description: "The caller's role in the organization" }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Organization");

export const CreatedOrganizationSchema = OrganizationSchema.extend({
  default_environment_id: z.string(),
  default_tenant_id: z.string(),
}).openapi("CreatedOrganization");

export const CreateOrganizationBody = z.object({
  name: z.string().trim().min(1).max(255),
  slug: z
    .string()
    .min(1)
    .max(63)
    .regex(SLUG_RE, "Lowercase letters, digits and single hyphens between them")
    .openapi({ example: "acme" }),
  type: z.enum(ORG_TYPES).default("business"),
});

export const UpdateOrganizationBody = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  status: z.enum(ORG_STATUSES).optional(),
});

export const InvitationSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    organization_name: z.string().optional(),
    email: z.string(),
    role: z.enum(INVITABLE_ROLES),
    status: z.enum(["pending", "accepted", "revoked", "expired"]),
    expires_at: Timestamp,
    created_at: Timestamp,
  })
  .openapi("Invitation");

export const MemberSchema = z
  .object({
    member_id: z.string(),
    user_id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    role: z.enum(ROLES),
    joined_at: Timestamp,
  })
  .openapi("Member");

export const MembersSchema = z.object({ members: z.array(MemberSchema), invitations: z.array(InvitationSchema) });

export const InviteBody = z.object({
  email: z.email().max(254),
  role: z.enum(INVITABLE_ROLES).default("viewer"),
});

export const RoleBody = z.object({
  user_id: z.string().min(1).max(128).openapi({ description: "The member's user id (or member id)" }),
  role: z.enum(ROLES),
});


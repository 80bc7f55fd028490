import { z } from "@hono/zod-openapi";
import { SCOPES } from "../../contracts/scopes";
import { ROLES } from "../../db/schema";
import { Timestamp } from "../../lib/openapi";

export const Email = z.email().max(254).openapi({ example: "ada@example.com" });

export const UserSchema = z
  .object({ id: z.string(), email: z.string(), name: z.string().nullable(), created_at: Timestamp })
  .openapi("User");

export const SignupBody = z.object({
  email: Email,
  password: z.string().min(10).max(512).openapi({ example: "correct-horse-battery" }),
  name: z.string().trim().min(1).max(255).optional(),
});

export const LoginBody = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(512),
});

export const MeSchema = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("user"),
      user: UserSchema,
      organizations: z.array(
        z.object({ id: z.string(), name: z.string(), slug: z.string(), role: z.enum(ROLES) }),
      ),
    }),
    z.object({
      type: z.literal("api_key"),
      api_key: z.object({
        id: z.string(),
        name: z.string(),
        organization_id: z.string(),
        environment_id: z.string(),
        scopes: z.array(z.enum(SCOPES)),
        tenant_ids: z.array(z.string()),
        knowledge_base_id: z.string().nullable(),
      }),
    }),
  ])
  .openapi("Me");

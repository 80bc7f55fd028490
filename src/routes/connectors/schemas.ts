import { z } from "@hono/zod-openapi";
import { Timestamp } from "../../lib/openapi";

export const Slug = z.string().min(1).max(64).openapi({ example: "github" });
const SubjectId = z.string().trim().min(1).max(255).openapi({ description: "External end-user id (API keys only; required with a key)" });
const TenantId = z.string().min(1).max(128).openapi({ description: "Tenant of the end user (API keys only; required with a key)" });

export const ConnectorSchema = z
  .object({
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    logo: z.string().openapi({ description: "A data URI" }),
    category: z.string(),
    auth: z.literal("oauth2"),
    available: z.boolean().openapi({ description: "False until the connector's OAuth client is configured (CONNECTORS)" }),
    tools: z.array(z.object({ name: z.string(), description: z.string() })),
  })
  .openapi("Connector");

export const CatalogQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export const BySlugsBody = z.object({ slugs: z.array(Slug).min(1).max(100) });

export const OwnerFields = { tenant_id: TenantId.optional(), external_subject_id: SubjectId.optional() };

export const StatusBody = z.object({ slugs: z.array(Slug).min(1).max(100), ...OwnerFields });

export const StatusSchema = z
  .object({
    slug: z.string(),
    connected: z.boolean(),
    status: z.enum(["connected", "disconnected", "not_connected"]),
    reason: z.enum(["expired", "revoked", "scope_missing"]).nullable().openapi({ description: "Why a connection stopped working" }),
    account: z.string().nullable().openapi({ description: "The external account (login or e-mail)" }),
    connected_at: Timestamp.nullable(),
  })
  .openapi("ConnectorStatus");

export const AddBody = z.object({
  slug: Slug,
  ...OwnerFields,
  redirect_url: z.string().min(1).max(2048).openapi({
    description: "Where the browser goes after the provider: this service's origin, an https origin of the environment's allowed_redirect_origins, or http://localhost / 127.0.0.1 outside production",
  }),
});

export const AddResponse = z.object({
  redirect_url: z.string().openapi({ description: "Open it in the user's browser: a URL on this service that binds the flow to that browser, then goes to the provider" }),
  already_connected: z.boolean(),
});

export const SlugParam = z.object({ slug: Slug.openapi({ param: { name: "slug", in: "path" } }) });
export const OwnerQuery = z.object(OwnerFields);

export const CallbackQuery = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
});

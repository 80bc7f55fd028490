import { z } from "@hono/zod-openapi";
import { ARTIFACT_STATUSES, ARTIFACT_TYPES, ARTIFACT_VISIBILITIES } from "../../db/schema";
import { pagingQuery, Timestamp } from "../../lib/openapi";
import { ARTIFACT_LIMITS } from "../../services/artifacts/artifacts";
import { MAX_ATTACHED_ARTIFACTS } from "../../services/artifacts/attached";

export const PublishedSchema = z
  .object({
    visibility: z.enum(ARTIFACT_VISIBILITIES),
    url: z.string().openapi({ description: "PUBLIC_BASE_URL/p/:slug" }),
    published_at: Timestamp,
  })
  .openapi("ArtifactPublication");

export const ArtifactSchema = z
  .object({
    id: z.string(),
    slug: z.string().openapi({ description: "Fixed at creation; the artifact can be addressed by it" }),
    knowledge_base_id: z.string(),
    tenant_id: z.string(),
    type: z.enum(ARTIFACT_TYPES),
    title: z.string(),
    summary: z.string(),
    content: z.string(),
    status: z.enum(ARTIFACT_STATUSES),
    revision: z.number().int().openapi({ description: "Creation is revision 1; each successful PATCH adds one" }),
    published: PublishedSchema.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Artifact");

export const RevisionSchema = z
  .object({ revision: z.number().int(), title: z.string(), summary: z.string(), content: z.string(), created_at: Timestamp })
  .openapi("ArtifactRevision");

const title = z.string().trim().min(1).max(ARTIFACT_LIMITS.title);
const summary = z.string().max(ARTIFACT_LIMITS.summary);

export const CreateArtifactBody = z.object({
  type: z.enum(ARTIFACT_TYPES),
  title,
  summary,
  content: z
    .string()
    .refine((s) => s.trim().length > 0, "Must not be blank")
    .openapi({ description: `Complete Markdown or HTML, at most ${ARTIFACT_LIMITS.contentBytes} bytes (413 above)` }),
  tenant_id: z.string().min(1).max(128).optional().openapi({ description: "Optional; must be the knowledge base's tenant" }),
});

const TEXT_MAX = ARTIFACT_LIMITS.contentBytes;

export const EditSchema = z
  .object({
    oldText: z.string().min(1).max(TEXT_MAX).openapi({ description: "Text to find: exactly once, or at least once with replaceAll" }),
    newText: z.string().max(TEXT_MAX),
    replaceAll: z.boolean().optional(),
  })
  .openapi("ArtifactEdit");

export const UpdateArtifactBody = z
  // Loose, so that a `content` field is seen and refused instead of silently dropped.
  .looseObject({
    title: title.optional(),
    summary: summary.optional(),
    edits: z.array(EditSchema).min(ARTIFACT_LIMITS.editsMin).max(ARTIFACT_LIMITS.editsMax).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.content !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["content"],
        message: "content cannot be replaced directly; send edits (an edit's oldText may be the whole content)",
      });
      return;
    }
    const meta = b.title !== undefined || b.summary !== undefined;
    if (b.edits && meta) {
      ctx.addIssue({ code: "custom", path: ["edits"], message: "Send either title/summary or edits, not both" });
    } else if (!b.edits && !meta) {
      ctx.addIssue({ code: "custom", path: [], message: "Send title and/or summary, or edits" });
    }
  });

export const ListArtifactsQuery = pagingQuery(100, 50).extend({
  type: z.enum(ARTIFACT_TYPES).optional(),
  query: z.string().max(ARTIFACT_LIMITS.query).optional().openapi({ description: "Searches title, summary and content" }),
  include_status: z.enum(["active", "archived", "all"]).default("active"),
  tenant_id: z.string().min(1).max(128).optional().openapi({ description: "Optional; must be the knowledge base's tenant" }),
});

export const PublishBody = z.object({ visibility: z.enum(ARTIFACT_VISIBILITIES) });

export const RevisionsQuery = pagingQuery(200, 100);

/** For chat bodies (POST /chats, POST /chats/:id/messages); resolve with loadAttachedArtifacts. */
export const AttachedArtifactIds = z
  .array(z.string().min(1).max(128))
  .max(MAX_ATTACHED_ARTIFACTS)
  .openapi({ description: `Up to ${MAX_ATTACHED_ARTIFACTS} active artifacts of the chat's knowledge base, given to the model as context for the turn` });

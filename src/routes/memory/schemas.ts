import { z } from "@hono/zod-openapi";
import { MEMORY_KINDS, MEMORY_MODES, MEMORY_RETENTIONS } from "../../db/schema";
import { Timestamp } from "../../lib/openapi";

export const MemorySettingsSchema = z
  .object({
    tenant_id: z.string(),
    mode: z.enum(MEMORY_MODES),
    retention: z.enum(MEMORY_RETENTIONS),
  })
  .openapi("MemorySettings");

export const UpdateMemorySettingsBody = z
  .object({
    mode: z.enum(MEMORY_MODES).optional(),
    retention: z.enum(MEMORY_RETENTIONS).optional(),
  })
  .refine((b) => b.mode !== undefined || b.retention !== undefined, { message: "Send mode, retention or both" });

export const MemorySchema = z
  .object({
    id: z.string(),
    subject_id: z.string().openapi({ description: "`user:<user id>`, `ext:<external_subject_id>` or `key:<api key id>`" }),
    content: z.string(),
    kind: z.enum(MEMORY_KINDS),
    knowledge_base_id: z.string().nullable().openapi({ description: "null for durable memories; set for kb_restricted ones" }),
    source_chat_id: z.string().nullable(),
    source_message_id: z.string().nullable(),
    entities: z.array(z.string()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Memory");

export const MemoryListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
  q: z.string().max(500).optional().openapi({ description: "Full-text: memories holding every word" }),
  subject_id: z.string().min(1).max(300).optional().openapi({ description: "Only this subject (`user:…`, `ext:…`, `key:…`)" }),
  external_subject_id: z.string().min(1).max(255).optional().openapi({ description: "Only this API-served end user (= subject_id `ext:<value>`)" }),
});

export const MemoryListSchema = z
  .object({
    memories: z.array(MemorySchema),
    total: z.number().int(),
    limit: z.number().int().optional(),
    offset: z.number().int().optional(),
    disabled: z.boolean().openapi({ description: "true when durable memory is off for the tenant (then memories is empty)" }),
  })
  .openapi("MemoryList");

export const KbMemoryListSchema = z
  .union([
    MemoryListSchema,
    z.object({ memories: z.null().openapi({ description: "null unless the knowledge base's kbMemoryMode is kb_restricted" }) }),
  ])
  .openapi("KnowledgeBaseMemoryList");

export const MemoryGraphSchema = z
  .object({
    nodes: z.array(z.object({ id: z.string(), name: z.string(), type: z.string(), memory_count: z.number().int() })),
    edges: z.array(z.object({ id: z.string(), source: z.string(), target: z.string(), relation: z.string(), memory_id: z.string() })),
  })
  .openapi("MemoryGraph");

export const GraphQuery = z.object({
  subject_id: MemoryListQuery.shape.subject_id,
  external_subject_id: MemoryListQuery.shape.external_subject_id,
});


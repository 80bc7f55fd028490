import { z } from "@hono/zod-openapi";
import { KB_MEMORY_MODES, KB_STATUSES } from "../../db/schema";
import { Timestamp } from "../../lib/openapi";

const PROMPT_MAX = 20_000;
const promptField = () => z.string().max(PROMPT_MAX).nullable();

export const PromptSchema = z
  .object({
    persona: z.string().nullable(),
    instructions: z.string().nullable(),
    customPrompt: z.string().nullable(),
    mainCustomPrompt: z.string().nullable().openapi({ description: "Full prompt override for Deep mode" }),
    sqlCustomPrompt: z.string().nullable(),
    sqlAgentInstructions: z.string().nullable(),
    sqlAnsweringInstructions: z.string().nullable(),
    chartInstructions: z.string().nullable(),
  })
  .openapi("KnowledgeBasePrompt");

export const KnowledgeBaseSchema = PromptSchema.extend({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(KB_STATUSES).openapi({ description: "`inactive` refuses new chats and queries (409)" }),
  kbMemoryMode: z.enum(KB_MEMORY_MODES),
  agent_sharing: z.object({ inbound_delegation_enabled: z.boolean() }),
  embedding_model: z.string().nullable().openapi({ description: "Set when the first document is indexed" }),
  embedding_dimensions: z.number().int().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi("KnowledgeBase");

/** The body of GET /knowledge-bases/{id} (and of create and update), for tests and clients. */
export type KnowledgeBaseResponse = z.infer<typeof KnowledgeBaseSchema>;

const promptInput = {
  persona: promptField().optional(),
  instructions: promptField().optional(),
  customPrompt: promptField().optional(),
  mainCustomPrompt: promptField().optional(),
  sqlCustomPrompt: promptField().optional(),
  sqlAgentInstructions: promptField().optional(),
  sqlAnsweringInstructions: promptField().optional(),
  chartInstructions: promptField().optional(),
};

export const CreateKnowledgeBaseBody = z.object({
  tenant_id: z.string().min(1).max(128),
  name: z.string().trim().min(1).max(255),
  description: z.string().max(2000).nullable().optional(),
  ...promptInput,
});

/** The create body's fields (all optional, without the tenant: a knowledge base never moves), plus state. */
export const UpdateKnowledgeBaseBody = CreateKnowledgeBaseBody.omit({ tenant_id: true }).partial().extend({
  status: z.enum(KB_STATUSES).optional(),
  kbMemoryMode: z.enum(KB_MEMORY_MODES).optional(),
  agent_sharing: z.strictObject({ inbound_delegation_enabled: z.boolean() }).optional(),
});

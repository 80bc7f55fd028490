import { z } from "@hono/zod-openapi";
import { A2A_AGENT_STATUSES } from "../../db/schema";
import { Timestamp } from "../../lib/openapi";

const secretField = (what: string) =>
  z
    .union([z.string().max(16_000), z.record(z.string(), z.unknown())])
    .nullable()
    .optional()
    .openapi({ type: "string", description: `${what} Stored encrypted; authorized reads return the decrypted value.` });

export const A2aAgentSchema = z
  .object({
    id: z.string().openapi({ example: "a2a_4k9x2m7q8r1t5v3w6y0z" }),
    knowledge_base_id: z.string(),
    name: z.string(),
    cardUrl: z.string(),
    description: z.string().nullable(),
    headers: z.string().nullable().openapi({ description: "Serialized JSON object of request headers (decrypted)" }),
    metadata: z.string().nullable().openapi({ description: "Serialized metadata (decrypted)" }),
    card: z
      .object({
        name: z.string(),
        description: z.string(),
        url: z.string(),
        version: z.string(),
        protocol_version: z.string(),
        skills: z.array(z.object({ id: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) })),
      })
      .nullable(),
    status: z.enum(A2A_AGENT_STATUSES).openapi({ description: "`error` after a failed call (see last_error); a successful call makes it `ready` again" }),
    last_error: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("A2aAgent");

export const CreateA2aAgentBody = z.object({
  name: z.string().trim().min(1).max(255),
  cardUrl: z.string().trim().min(1).max(2048).openapi({ description: "URL of the agent card (a bare origin means its /.well-known/agent-card.json)" }),
  description: z.string().max(2000).nullable().optional(),
  headers: secretField("Serialized JSON object of string header values sent with every call."),
  metadata: secretField("Serialized metadata (a JSON object is also sent as the message metadata)."),
});

export const UpdateA2aAgentBody = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  cardUrl: z.string().trim().min(1).max(2048).optional(),
  description: z.string().max(2000).nullable().optional(),
  headers: secretField("Serialized JSON object of string header values; null removes them."),
  metadata: secretField("Serialized metadata; null removes it."),
});


import { z } from "@hono/zod-openapi";
import { ACCESS_LEVELS, AGENT_MODES, MESSAGE_STATUSES } from "../../db/schema";
import { isUuid } from "../../lib/ids";
import { Timestamp } from "../../lib/openapi";

export const MAX_CONTENT = 32_000;
export const MAX_ATTACHED_ARTIFACTS = 20;
export const MAX_IMAGES = 2;

export const SubjectId = z.string().trim().min(1).max(255).openapi({ description: "External end-user id (API keys only)" });
const IdList = (max: number) => z.array(z.string().min(1).max(128)).max(max);

export const SourceSchema = z
  .object({
    index: z.number().int(),
    document_id: z.string().nullable(),
    filename: z.string().nullable(),
    chunk_id: z.string().nullable(),
    text: z.string(),
    score: z.number(),
    page: z.number().int().nullable(),
    url: z.string().nullable(),
    memory_id: z.string().optional().openapi({ description: "Set when the source is a recalled memory" }),
  })
  .openapi("Source");

export const UsageSchema = z
  .object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int(), credits: z.number() })
  .openapi("Usage");

export const MessageSchema = z
  .object({
    id: z.string(),
    chat_id: z.string(),
    role: z.enum(["user", "assistant"]),
    content: z.string(),
    created_at: Timestamp,
    metadata: z
      .object({
        sources: z.array(SourceSchema),
        usage: UsageSchema.nullable(),
        model: z.string().nullable(),
        status: z.enum(MESSAGE_STATUSES),
        memoryUsed: z.boolean(),
        delegatedAgentIds: z.array(z.string()),
        imageUrls: z.array(z.string()),
        attachedArtifactIds: z.array(z.string()).optional(),
        tool_calls: z
          .array(z.object({ call_id: z.string(), tool: z.string(), arguments: z.unknown(), is_error: z.boolean(), duration_ms: z.number() }))
          .optional()
          .openapi({ description: "Tools the answer called (the owner's view only; never in shared transcripts)" }),
        memory_ids: z.array(z.string()).optional().openapi({ description: "Memories the answer used (the owner's view only)" }),
        run_id: z.string().optional().openapi({ description: "The agent run this message belongs to" }),
        error: z.object({ code: z.string(), message: z.string() }).optional(),
      })
      .openapi({ description: "`status`: complete, partial (stopped or disconnected) or error" }),
  })
  .openapi("Message");

export const ChatSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    knowledge_base_id: z.string(),
    model: z.string(),
    title: z.string().nullable(),
    access_level: z.enum(ACCESS_LEVELS),
    external_subject_id: z.string().nullable(),
    agent_mode: z.enum(AGENT_MODES),
    is_query: z.boolean(),
    shared_source_chat_id: z.string().nullable(),
    websearch_enable: z.boolean(),
    message_count: z.number().int(),
    last_message_at: Timestamp.nullable(),
    terminated_at: Timestamp.nullable(),
    termination_reason: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Chat");

const turnFields = {
  agent_mode: z.enum(AGENT_MODES).default("deep"),
  websearch_enable: z.boolean().default(false),
  external_subject_id: SubjectId.optional(),
  connector_slugs: IdList(100).default([]),
  skill_ids: IdList(50).default([]),
  delegate_agent_ids: IdList(20).default([]),
  attached_artifact_ids: IdList(MAX_ATTACHED_ARTIFACTS).default([]),
};

const DATA_URL_RE = /^data:image\/(png|jpeg|jpg|webp|gif);base64,[A-Za-z0-9+/=\s]+$/;
export const ImageDataUrl = z
  .string()
  .max(7_000_000, "Each image must be at most 5 MB")
  .regex(DATA_URL_RE, "Must be a base64 data URL of a png, jpeg, webp or gif image");

export const CreateChatBody = z.object({
  id: z.string().refine(isUuid, "Must be a UUID").openapi({ example: "5b6f1c1e-8f5e-4a8b-9a37-1e0f6c1b2d3e" }),
  tenant_id: z.string().min(1).max(128),
  knowledge_base_id: z.string().min(1).max(128),
  model: z.string().min(1).max(200),
  title: z.string().max(10_000).optional().openapi({ description: "Longer than 255 characters is truncated" }),
  message: z.string().min(1).max(MAX_CONTENT).optional().openapi({ description: "First user turn" }),
  shared_source_chat_id: z.string().min(1).max(128).optional(),
  images: z.array(ImageDataUrl).max(MAX_IMAGES).default([]).openapi({ description: "Up to two base64 image data URLs" }),
  ...turnFields,
});

export const SendMessageBody = z.object({
  content: z.string().min(1).max(MAX_CONTENT),
  model: z.string().min(1).max(200),
  ...turnFields,
});

export const SubjectQuery = z.object({ external_subject_id: SubjectId.optional() });

export const TodoSchema = z
  .object({
    todo: z
      .object({
        items: z.array(z.object({ id: z.string(), content: z.string(), status: z.enum(["pending", "in_progress", "completed"]) })),
        updated_at: Timestamp,
      })
      .nullable(),
  })
  .openapi("ChatTodo");

export const TurnResponseSchema = z
  .object({ user_message: MessageSchema, assistant_message: MessageSchema, usage: UsageSchema })
  .openapi("TurnResponse");

/** A message as the AI SDK's `useChat` sends it (a UIMessage); only text parts are read. */
const UiMessage = z
  .object({
    id: z.string().max(200).optional(),
    role: z.enum(["system", "user", "assistant"]),
    parts: z.array(z.object({ type: z.string().max(100), text: z.string().max(MAX_CONTENT).optional() }).passthrough()).max(500),
  })
  .passthrough();

export const UiStreamBody = SendMessageBody.omit({ content: true, model: true, agent_mode: true })
  .extend({
    id: z.string().max(200).optional().openapi({ description: "useChat's chat id (the path names the chat)" }),
    messages: z.array(UiMessage).min(1).max(2000).openapi({
      description: "useChat's messages: the last one (a user message) is the new question; the history is the chat's own",
    }),
    trigger: z.enum(["submit-message", "regenerate-message"]).default("submit-message"),
    messageId: z.string().max(200).optional(),
    model: z.string().min(1).max(200).optional().openapi({ description: "Default: the chat's model" }),
    agent_mode: z.enum(AGENT_MODES).optional().openapi({ description: "Default: the chat's mode" }),
  })
  .openapi("UiStreamRequest");

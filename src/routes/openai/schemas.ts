import { z } from "@hono/zod-openapi";
import { MAX_CONTENT, SourceSchema } from "../chats/schemas";

/** Request and response shapes of the OpenAI-compatible endpoints (the subset our answers fill). */

/** Text parts are read; any other part (images, audio, files) is refused by the route with a 400 naming it. */
const ContentPart = z.object({ type: z.string().max(40), text: z.string().max(MAX_CONTENT).optional() }).passthrough();

export const ChatCompletionMessage = z
  .object({
    role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
    content: z.union([z.string().max(MAX_CONTENT), z.array(ContentPart).max(50), z.null()]).optional(),
    name: z.string().max(256).optional(),
  })
  .passthrough();

export const ChatCompletionBody = z
  .object({
    model: z.string().min(1).max(400).openapi({
      description: "`kb:<knowledge_base_id>`, `kb:<knowledge_base_id>:<model id>` (a model of GET /chats/models) or `agent:<agent_id>`",
      example: "kb:kb_01HZX...",
    }),
    messages: z.array(ChatCompletionMessage).min(1).max(200).openapi({
      description: "The conversation: the last message (a user message) is the question, earlier user and assistant messages are its history; system, developer and tool messages are ignored",
    }),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().nullish() }).passthrough().nullish(),
    n: z.number().int().min(1).max(1).nullish().openapi({ description: "Only 1" }),
  })
  .passthrough()
  .openapi("ChatCompletionRequest", {
    description: "An OpenAI chat-completions request. Sampling, tools and response-format fields are accepted and ignored.",
  });

const Usage = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });

export const ChatCompletionSchema = z
  .object({
    id: z.string().openapi({ example: "chatcmpl-3f0c…" }),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal("assistant"),
          content: z.string().openapi({ description: "The answer, citing its sources as [n]" }),
          refusal: z.null(),
          sources: z.array(SourceSchema).openapi({ description: "The cited passages; `index` is the n of [n]" }),
        }),
        finish_reason: z.literal("stop"),
        logprobs: z.null(),
      }),
    ),
    usage: Usage,
    chat_id: z.string().openapi({ description: "The query chat (or agent run's chat) that holds this turn" }),
  })
  .openapi("ChatCompletion");

export const ModelListSchema = z
  .object({
    object: z.literal("list"),
    data: z.array(
      z.object({
        id: z.string().openapi({ example: "kb:kb_01HZX..." }),
        object: z.literal("model"),
        created: z.number().int(),
        owned_by: z.string().openapi({ description: "The tenant" }),
        name: z.string(),
        description: z.string().nullable(),
      }),
    ),
  })
  .openapi("CompletionModelList");

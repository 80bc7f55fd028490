import { generateObject } from "ai";
import { z } from "zod";
import type { Env } from "../../env";
import { estimateTokens } from "../../lib/text";
import { languageModel } from "../models/llm";
import type { ModelInfo } from "../models/registry";
import { durableStatements, isCommand, sentences, tidy, type GraphPart, type Statement } from "./rules";

/**
 * Automatic extraction: the durable facts, preferences and standing
 * instructions of ONE user message (never recalled memories, retrieved
 * passages or the assistant's answer). With a provider model: one
 * structured-output call; offline: rules (./rules.ts).
 */

export const MAX_EXTRACTED = 5;

export const ExtractionSchema = z.object({
  memories: z
    .array(
      z.object({
        content: z.string().describe("One self-contained statement about the user, in the user's own words where possible"),
        kind: z.enum(["fact", "preference", "instruction"]),
        entities: z.array(z.object({ name: z.string(), type: z.string() })).describe("Named things in the statement; the user is 'User'"),
        relations: z
          .array(z.object({ source: z.string(), target: z.string(), relation: z.string() }))
          .describe("Edges between the entities, e.g. User -[works at]-> Acme"),
      }),
    )
    .describe("Empty when the message holds nothing worth remembering beyond this conversation"),
});

const SYSTEM =
  "You extract long-term memories about a user from ONE message they wrote to an assistant. Keep only durable, " +
  "useful facts about the user, their preferences and standing instructions for the assistant (name, role, employer, " +
  "projects and their identifiers, tools, likes and dislikes, how they want answers). Ignore questions, requests for " +
  "information, small talk and anything only relevant to the current question. Return at most " +
  `${MAX_EXTRACTED} memories; return an empty list when there is nothing to keep. Each memory is one short ` +
  "self-contained sentence in the first person as the user said it (\"My project code is ZEBRA-42.\"). For each, list " +
  "the entities (the user is named 'User') and the relations between them.";

/** The part of a message worth extracting from: its sentences other than explicit memory commands (handled on their own). */
export function extractableText(message: string): string {
  return sentences(message)
    .filter((s) => !isCommand(s))
    .join(" ")
    .trim();
}

/** Whether a model call could find anything: some sentence that is a statement, not a question, of three words or more. */
export function worthAsking(text: string): boolean {
  return sentences(text).some((s) => !s.endsWith("?") && s.split(/\s+/).length >= 3);
}

export interface Extracted extends Statement {
  graph?: GraphPart;
}

export function extractByRules(message: string): Extracted[] {
  return durableStatements(extractableText(message)).slice(0, MAX_EXTRACTED);
}

export async function extractWithModel(
  env: Env,
  info: ModelInfo,
  message: string,
  signal?: AbortSignal,
): Promise<{ memories: Extracted[]; usage: { input_tokens: number; output_tokens: number } }> {
  const prompt = `<user_message>\n${message.slice(0, 8000)}\n</user_message>`;
  const r = await generateObject({
    model: languageModel(env, info),
    schema: ExtractionSchema,
    schemaName: "memory_extraction",
    system: SYSTEM,
    prompt,
    abortSignal: signal,
    maxRetries: 1,
    maxOutputTokens: 800,
  });
  const usage = {
    input_tokens: r.usage?.inputTokens ?? estimateTokens(SYSTEM + prompt),
    output_tokens: r.usage?.outputTokens ?? estimateTokens(JSON.stringify(r.object)),
  };
  const memories = r.object.memories
    .map((m) => ({
      content: tidy(m.content),
      kind: m.kind,
      graph: { entities: m.entities.slice(0, 20), relations: m.relations.slice(0, 20) },
    }))
    .filter((m) => m.content)
    .slice(0, MAX_EXTRACTED);
  return { memories, usage };
}

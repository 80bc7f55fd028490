import type { KnowledgeBase, Source } from "../../db/schema";
import { formatAttachedArtifacts, type AttachedArtifact } from "../artifacts/attached";

/**
 * Prompt assembly from the knowledge base's prompt fields:
 * - persona: who the assistant is (defaults to a grounded assistant);
 * - instructions: extra rules appended to the grounding rules;
 * - customPrompt: replaces the built-in grounding rules;
 * - mainCustomPrompt (deep mode only): replaces the whole system prompt.
 * The numbered sources are always appended, so every answer stays grounded.
 */
export const DEFAULT_PERSONA =
  "You are a careful assistant that answers questions using the knowledge base of the organization you work for.";

export const GROUNDING_RULES = [
  "Answer using the numbered sources below. Cite every statement that relies on a source with its number in square brackets, like [1] or [2][3], right after the statement.",
  "Only cite numbers that appear in the sources list. Do not invent sources, facts, quotes or numbers.",
  "If the sources do not contain the answer, say that the knowledge base does not cover it, and answer only what the sources support.",
  "Be concise and well organised; use short paragraphs or bullet lists where they help.",
].join("\n");

export interface PromptExtras {
  mode: "quick" | "deep";
  skills?: Array<{ name: string; body: string }>;
  attachments?: AttachedArtifact[];
  summary?: string | null;
  /** Task instructions for this turn (an agent's goal and instructions). */
  instructions?: string | null;
  /** The model has tools: explain how their results are cited. */
  tools?: boolean;
}

export function formatSources(sources: Source[]): string {
  if (!sources.length) return "(no sources were found for this question)";
  return sources
    .map((s) => {
      const where = [s.filename ?? s.url, s.page ? `page ${s.page}` : null].filter(Boolean).join(", ");
      return `[${s.index}] ${where ? `(${where}) ` : ""}${s.text.replace(/\s+/g, " ").trim()}`;
    })
    .join("\n\n");
}

export function systemPrompt(kb: KnowledgeBase, sources: Source[], extras: PromptExtras): string {
  const parts: string[] = [];
  if (extras.mode === "deep" && kb.mainCustomPrompt) {
    parts.push(kb.mainCustomPrompt);
  } else {
    parts.push(kb.persona?.trim() || DEFAULT_PERSONA);
    parts.push(kb.customPrompt?.trim() || GROUNDING_RULES);
    if (kb.instructions?.trim()) parts.push(`Additional instructions:\n${kb.instructions.trim()}`);
  }
  for (const skill of extras.skills ?? []) parts.push(`Skill "${skill.name}" (follow it when it applies):\n${skill.body}`);
  if (extras.attachments?.length) {
    parts.push(`The user attached these artifacts as context for this turn:\n${formatAttachedArtifacts(extras.attachments)}`);
  }
  if (extras.instructions?.trim()) parts.push(`Your task:\n${extras.instructions.trim()}`);
  if (extras.summary) parts.push(`Summary of the earlier conversation:\n${extras.summary}`);
  if (extras.tools) {
    parts.push(
      "You can call tools to find more information before answering. Tool results carry numbered passages: cite them by " +
        "their numbers exactly like the sources below. When you have enough, answer the user directly.",
    );
  }
  parts.push(`Sources:\n${formatSources(sources)}`);
  return parts.join("\n\n");
}

/** Removes citations to numbers that are not in the sources list. */
export function sanitizeCitations(text: string, sourceCount: number): string {
  return text.replace(/\[(\d{1,3})\]/g, (m, n) => (Number(n) >= 1 && Number(n) <= sourceCount ? m : ""));
}

import type { Database } from "../../db/client";
import type { Chat, KnowledgeBase, TurnUsage } from "../../db/schema";
import type { Env } from "../../env";
import { estimateTokens, STOPWORDS, terms, words } from "../../lib/text";
import { recordUsage, type Actor } from "../billing/metering";
import { recentMessages } from "../chats/chats";
import { complete, type TokenUsage } from "../models/llm";
import { getModel, listModels, LOCAL_MODEL_ID, type ModelInfo } from "../models/registry";
import { decompose } from "./plan";

/**
 * Follow-up questions and prompt improvement: small model calls metered as
 * `follow_up` and `improve_prompt`. With local-extractive they are made by
 * rules from the conversation and its sources, and metered by estimated tokens.
 */

export const IMPROVE_CATEGORIES = ["general", "research", "summary", "comparison", "troubleshooting"] as const;
export type ImproveCategory = (typeof IMPROVE_CATEGORIES)[number];

async function meter(
  db: Database,
  input: { chat?: Chat | null; kb: KnowledgeBase; model: ModelInfo; usage: TokenUsage; actor: Actor; operation: "follow_up" | "improve_prompt" },
): Promise<TurnUsage> {
  const r = await recordUsage(db, {
    organizationId: input.kb.organizationId,
    tenantId: input.kb.tenantId,
    operation: input.operation,
    model: input.model.id,
    pricing: input.model.pricing,
    usage: input.usage,
    actor: input.actor,
    chatId: input.chat?.id ?? null,
  });
  return { input_tokens: r.input_tokens, output_tokens: r.output_tokens, total_tokens: r.total_tokens, credits: r.credits };
}

/** Salient phrases of a text that the question does not already contain. */
function salientTerms(text: string, exclude: Set<string>, n: number): string[] {
  const counts = new Map<string, { n: number; surface: string }>();
  for (const w of words(text)) {
    if (w.length < 4 || STOPWORDS.has(w) || /^\d+$/.test(w)) continue;
    const key = terms(w)[0];
    if (!key || exclude.has(key)) continue;
    const e = counts.get(key) ?? { n: 0, surface: w };
    e.n++;
    counts.set(key, e);
  }
  return [...counts.values()].sort((a, b) => b.n - a.n).slice(0, n).map((e) => e.surface);
}

export async function followUpQuestions(
  db: Database,
  env: Env,
  input: { chat: Chat; kb: KnowledgeBase; model: ModelInfo; actor: Actor },
): Promise<string[]> {
  const recent = await recentMessages(db, input.chat.id, 6);
  const lastQuestion = [...recent].reverse().find((m) => m.role === "user")?.content ?? input.kb.name;
  const lastAnswer = [...recent].reverse().find((m) => m.role === "assistant");
  let questions: string[];
  let usage: TokenUsage;

  if (input.model.id !== LOCAL_MODEL_ID) {
    const r = await complete(env, input.model, {
      system:
        "Suggest exactly three short follow-up questions the user could ask next about the knowledge base. " +
        "One per line, no numbering, each ending with a question mark.",
      prompt: `Knowledge base: ${input.kb.name}\nLast question: ${lastQuestion}\nLast answer: ${lastAnswer?.content ?? "(none)"}`,
    });
    usage = r.usage;
    questions = r.text
      .split("\n")
      .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, "").trim())
      .filter((l) => l.length > 3);
  } else {
    const sources = lastAnswer?.metadata.sources ?? [];
    const context = sources.map((s) => s.text).join(" ");
    const asked = new Set(terms(lastQuestion));
    const topics = salientTerms(context || (lastAnswer?.content ?? ""), asked, 4);
    const files = [...new Set(sources.map((s) => s.filename).filter(Boolean))] as string[];
    const subject = terms(lastQuestion).length ? lastQuestion.replace(/[?.!\s]+$/, "") : input.kb.name;
    questions = [];
    if (topics[0]) questions.push(`What does the knowledge base say about ${topics[0]}?`);
    if (topics[1]) questions.push(`How does ${topics[1]} relate to ${topics[0] ?? "this"}?`);
    if (files[0]) questions.push(`Can you summarize the key points of ${files[0]}?`);
    if (topics[2]) questions.push(`Are there any exceptions or limits regarding ${topics[2]}?`);
    questions.push(`What are the most important details about "${subject.slice(0, 80)}"?`);
    questions.push(`Which documents cover "${subject.slice(0, 80)}" in more depth?`);
    usage = { input_tokens: estimateTokens(lastQuestion + context), output_tokens: estimateTokens(questions.join(" ")) };
  }
  const unique = [...new Set(questions)].slice(0, 3);
  while (unique.length < 3) unique.push(["Can you give an example?", "What should I do next?", "Where can I read more?"][unique.length]);
  await meter(db, { chat: input.chat, kb: input.kb, model: input.model, usage, actor: input.actor, operation: "follow_up" });
  return unique;
}

const CATEGORY_RULES: Record<ImproveCategory, { ask: (q: string) => string; format: string; technique: string }> = {
  general: {
    ask: (q) => q,
    format: "Answer concisely, and cite the source of every statement.",
    technique: "clear output format",
  },
  research: {
    ask: (q) => `Research this question thoroughly: ${q}`,
    format: "List the key findings as bullet points with citations, then note what the documents do not cover.",
    technique: "exhaustive search with gaps called out",
  },
  summary: {
    ask: (q) => `Summarize what the documents say about: ${q}`,
    format: "Give at most 5 bullet points, most important first, each with a citation.",
    technique: "bounded summary length",
  },
  comparison: {
    ask: (q) => `Compare the following, point by point: ${q}`,
    format: "Present the comparison as a table (criteria as rows), then a one-sentence conclusion, with citations.",
    technique: "structured comparison criteria",
  },
  troubleshooting: {
    ask: (q) => `Help me troubleshoot this problem: ${q}`,
    format: "List the likely causes in order of likelihood, then numbered steps to check or fix each, with citations.",
    technique: "cause-then-steps structure",
  },
};

export async function improvePrompt(
  db: Database,
  env: Env,
  input: { kb: KnowledgeBase; model?: ModelInfo; query: string; category: ImproveCategory; actor: Actor },
) {
  const model =
    input.model ?? listModels(env).find((m) => m.provider !== "local" && m.available) ?? getModel(env, LOCAL_MODEL_ID)!;
  const q = input.query.replace(/\s+/g, " ").trim();
  let improved: string | null = null;
  let analysis = "";
  let techniques: string[] = [];
  let usage: TokenUsage = { input_tokens: 0, output_tokens: 0 };

  if (model.id !== LOCAL_MODEL_ID) {
    const r = await complete(env, model, {
      system:
        "You improve questions written for a retrieval-augmented assistant. Reply with JSON only: " +
        '{"improved_prompt": string, "analysis": string, "techniques_applied": string[]}.',
      prompt: `Knowledge base: ${input.kb.name}${input.kb.description ? ` — ${input.kb.description}` : ""}\nCategory: ${input.category}\nQuestion: ${q}`,
    });
    usage = r.usage;
    try {
      const parsed = JSON.parse(r.text.replace(/^```(?:json)?|```$/g, "").trim());
      if (typeof parsed.improved_prompt === "string" && parsed.improved_prompt.trim()) {
        improved = parsed.improved_prompt.trim();
        analysis = typeof parsed.analysis === "string" ? parsed.analysis : "";
        techniques = Array.isArray(parsed.techniques_applied) ? parsed.techniques_applied.map(String).slice(0, 10) : [];
      }
    } catch {
      // Fall through to the rules below; the model call is still metered.
    }
  }

  if (!improved) {
    const rule = CATEGORY_RULES[input.category];
    const notes: string[] = [];
    techniques = [];
    const contentTerms = terms(q);
    if (contentTerms.length < 3) notes.push("The question is short and may match too broadly; it now names its subject explicitly.");
    const parts = decompose(q);
    if (parts.length > 1) {
      notes.push(`It asks ${parts.length} things at once; they are now listed separately so each gets an answer.`);
      techniques.push("decomposition into sub-questions");
    }
    const scope = `Using the documents in the knowledge base "${input.kb.name}"`;
    const body = parts.length > 1 ? `${rule.ask("")}\n${parts.map((p, i) => `${i + 1}. ${p}`).join("\n")}`.trim() : rule.ask(q);
    improved = `${scope}, ${body.charAt(0).toLowerCase()}${body.slice(1)}${/[?.!]$/.test(body) ? "" : "?"}\n${rule.format}\nIf the documents do not cover something, say so instead of guessing.`;
    techniques.push("explicit source scope", rule.technique, "citation requirement", "no-guessing instruction");
    notes.push(`Category "${input.category}": the prompt states the expected output format.`);
    analysis = notes.join(" ");
    usage = { input_tokens: estimateTokens(q), output_tokens: estimateTokens(improved) };
  }
  const metered = await meter(db, { kb: input.kb, model, usage, actor: input.actor, operation: "improve_prompt" });
  return { improved_prompt: improved, analysis, techniques_applied: techniques, usage: metered };
}

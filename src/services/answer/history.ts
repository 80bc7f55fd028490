import type { Database } from "../../db/client";
import type { Chat, Message } from "../../db/schema";
import { estimateTokens, sentences } from "../../lib/text";
import { recentMessages, updateChat } from "../chats/chats";
import type { TokenUsage } from "../models/llm";

/**
 * Long conversations: the most recent turns stay verbatim; when the turns since
 * the last summary no longer fit the history budget, the older ones are folded
 * into a stored rolling summary (metered as `summary` by the caller).
 */
export const KEEP_RECENT_MESSAGES = 6;
export const SUMMARY_MAX_CHARS = 6_000;

export function historyBudget(contextWindow: number): number {
  return Math.max(512, Math.floor(contextWindow * 0.25));
}

export interface History {
  summary: string | null;
  recent: Message[];
  /** Set when a new summary was made: what it cost. */
  summarized?: { usage: TokenUsage; model: string; messages: number };
}

/** Extractive fold used with local-extractive: the gist of each message, newest kept. */
export function extractiveSummary(previous: string | null, messages: Message[]): string {
  const lines = messages.map((m) => {
    const gist = sentences(m.content).slice(0, m.role === "user" ? 1 : 2).join(" ").slice(0, 300);
    return `${m.role === "user" ? "User asked" : "Assistant answered"}: ${gist}`;
  });
  let text = [previous, ...lines].filter(Boolean).join("\n");
  if (text.length > SUMMARY_MAX_CHARS) text = text.slice(text.length - SUMMARY_MAX_CHARS).replace(/^[^\n]*\n/, "");
  return text;
}

export async function loadHistory(
  db: Database,
  chat: Chat,
  opts: {
    contextWindow: number;
    /** The message being answered (excluded from history). */
    currentSeq: number;
    summarize: (previous: string | null, messages: Message[]) => Promise<{ text: string; usage: TokenUsage; model: string }>;
    /** The chat's messages as its Durable Object holds them (src/durable/transcript-end.ts): not read again. */
    preloaded?: Message[];
  },
): Promise<History> {
  const loaded = opts.preloaded ? opts.preloaded.filter((m) => m.seq > chat.summaryThroughSeq).slice(-400) : await recentMessages(db, chat.id, 400, chat.summaryThroughSeq);
  const since = loaded.filter((m) => m.seq < opts.currentSeq);
  const tokens = since.reduce((s, m) => s + estimateTokens(m.content), 0);
  if (tokens <= historyBudget(opts.contextWindow) || since.length <= KEEP_RECENT_MESSAGES) {
    return { summary: chat.summary, recent: since };
  }
  const fold = since.slice(0, since.length - KEEP_RECENT_MESSAGES);
  const recent = since.slice(since.length - KEEP_RECENT_MESSAGES);
  const made = await opts.summarize(chat.summary, fold);
  await updateChat(db, chat.id, { summary: made.text, summaryThroughSeq: fold[fold.length - 1].seq });
  return { summary: made.text, recent, summarized: { usage: made.usage, model: made.model, messages: fold.length } };
}

import { Slicer } from "../../lib/slices";
import type { ParsedSection } from "./types";

/**
 * Chunking by structure within a token budget. Sizes are in estimated tokens
 * (characters / 4, close to BPE/WordPiece counts for English). Issue 4 tunes
 * these by measurement; keep them here as the single source.
 *  - TARGET: a chunk is closed once adding the next block would pass it.
 *  - MAX: no chunk exceeds it (the BGE models read 512 tokens).
 *  - OVERLAP: the tail of the previous chunk repeated at the start of the
 *    next one within the same section, so a sentence cut at a boundary is
 *    still found whole.
 */
export const CHUNK_TARGET_TOKENS = 350;
export const CHUNK_MAX_TOKENS = 480;
export const CHUNK_OVERLAP_TOKENS = 40;
/** A chunk smaller than this (a short introduction under a heading) is merged into the next one below it. */
export const CHUNK_MIN_TOKENS = 64;

export const estimateTokens = (s: string) => Math.ceil(s.length / 4);

export interface Chunk {
  ordinal: number;
  /** Heading path, "Guide > Installation"; "" when none. */
  heading: string;
  page: number | null;
  body: string;
  tokens: number;
}

const sentences = (s: string) => s.split(/(?<=[.!?。！？])\s+/u).filter(Boolean);

/** Splits text longer than `max` tokens at the gentlest boundary available: lines, sentences, words. */
function splitLong(text: string, max: number): string[] {
  if (estimateTokens(text) <= max) return [text];
  const lines = text.split("\n");
  if (lines.length > 1) return pack(lines, max, "\n");
  const parts = sentences(text);
  if (parts.length > 1) return pack(parts, max, " ");
  // One enormous "word" run: cut at whitespace near the limit, else hard.
  const out: string[] = [];
  const maxChars = max * 4;
  let rest = text;
  while (rest.length > maxChars) {
    let cut = rest.lastIndexOf(" ", maxChars);
    if (cut < maxChars / 2) cut = maxChars;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out;
}

/** Greedily packs parts (each split further when too long) into pieces of at most `max` tokens. */
function pack(parts: string[], max: number, joiner: string): string[] {
  const out: string[] = [];
  let cur = "";
  for (const part of parts.flatMap((p) => splitLong(p, max))) {
    const candidate = cur ? cur + joiner + part : part;
    if (cur && estimateTokens(candidate) > max) {
      out.push(cur);
      cur = part;
    } else cur = candidate;
  }
  if (cur.trim()) out.push(cur);
  return out;
}

/** The last sentences of `text`, at most `budget` tokens. */
function tail(text: string, budget: number): string {
  const s = sentences(text.replace(/\s+/g, " "));
  let out = "";
  for (let i = s.length - 1; i >= 0; i--) {
    const next = out ? `${s[i]} ${out}` : s[i];
    if (estimateTokens(next) > budget) break;
    out = next;
  }
  return out;
}

interface Draft {
  headings: string[];
  page: number | null;
  body: string;
}

function chunkSection(section: ParsedSection): Draft[] {
  const blocks = section.text
    .split(/\n\s*\n/)
    .map((b) => b.trim())
    .filter(Boolean)
    .flatMap((b) => splitLong(b, CHUNK_MAX_TOKENS));
  const out: Draft[] = [];
  let cur: string[] = [];
  let tokens = 0;
  const emit = () => {
    if (cur.length) out.push({ headings: section.headings, page: section.page ?? null, body: cur.join("\n\n") });
  };
  for (const block of blocks) {
    const t = estimateTokens(block);
    if (cur.length && tokens + t > CHUNK_TARGET_TOKENS) {
      emit();
      const overlap = tail(cur.join(" "), CHUNK_OVERLAP_TOKENS);
      cur = overlap && estimateTokens(overlap) + t <= CHUNK_MAX_TOKENS ? [overlap] : [];
      tokens = cur.length ? estimateTokens(overlap) : 0;
    }
    cur.push(block);
    tokens += t;
  }
  emit();
  return out;
}

const isWithin = (inner: string[], outer: string[]) => outer.length <= inner.length && outer.every((h, i) => inner[i] === h);

/**
 * Sections -> chunks: each section is cut into chunks of about
 * CHUNK_TARGET_TOKENS at paragraph boundaries (with overlap). A chunk smaller
 * than CHUNK_MIN_TOKENS is merged into the next one when that one lies under
 * its heading on the same page (a one-line introduction should not be a chunk
 * of its own); the merged chunk keeps the deeper heading path. Heading path
 * and page stay with every chunk. Runs in slices that yield (lib/slices.ts).
 */
export async function chunkSections(sections: ParsedSection[], slicer = new Slicer()): Promise<Chunk[]> {
  const drafts: Draft[] = [];
  for (const s of sections) {
    if (!s.text.trim()) continue;
    drafts.push(...chunkSection(s));
    if (slicer.due(1 + (s.text.length >> 10))) await slicer.pause();
  }
  const merged: Draft[] = [];
  for (const d of drafts) {
    const prev = merged[merged.length - 1];
    if (
      prev &&
      prev.page === d.page &&
      estimateTokens(prev.body) < CHUNK_MIN_TOKENS &&
      isWithin(d.headings, prev.headings) &&
      estimateTokens(prev.body) + estimateTokens(d.body) + 10 <= CHUNK_MAX_TOKENS
    ) {
      const sub = d.headings.slice(prev.headings.length);
      prev.body = `${prev.body}\n\n${sub.length ? sub.join(" > ") + "\n" : ""}${d.body}`;
      prev.headings = d.headings;
      continue;
    }
    merged.push({ ...d });
  }
  return merged.map((d, ordinal) => ({
    ordinal,
    heading: d.headings.join(" > "),
    page: d.page,
    body: d.body,
    tokens: estimateTokens(d.body),
  }));
}

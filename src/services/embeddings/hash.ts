import { Slicer } from "../../lib/slices";
import type { Embedder } from "./types";

/**
 * `hash-v1-<d>`: the offline default. NOT a learned model: a deterministic
 * feature-hashing embedder ("hashing trick"). Each text becomes a bag of
 * features: lower-cased word unigrams (weight 1), word bigrams (0.5) and the
 * character 3-, 4- and 5-grams of each word (0.25 each, which gives partial
 * credit for shared stems, plurals and typos). Every feature is hashed with
 * 32-bit FNV-1a into one of `d` buckets with a sign taken from a second hash
 * (so collisions cancel out rather than pile up), weighted by sublinear term
 * frequency (1 + ln tf), and the vector is L2-normalized, so cosine similarity
 * approximates weighted lexical overlap. Frequent English function words are
 * damped. It needs no network or key and is identical everywhere; semantic
 * matches without shared words ("car" / "automobile") need a real model
 * (EMBEDDING_PROVIDER=openai or workers-ai).
 */
const STOPWORDS = new Set(
  ("a an and are as at be been but by for from has have he her his i if in into is it its me my no not of on or our " +
    "she so such that the their them then there these they this to was we were what when where which who will with you your")
    .split(" "),
);

const WORD_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.5;
const NGRAM_WEIGHT = 0.25;
const STOPWORD_DAMPING = 0.1;

function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function hashFeatures(text: string): Map<string, number> {
  const words = text.toLowerCase().normalize("NFKC").match(/[\p{L}\p{N}]+/gu) ?? [];
  const features = new Map<string, number>();
  const add = (f: string, w: number) => features.set(f, (features.get(f) ?? 0) + w);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    const damp = STOPWORDS.has(w) ? STOPWORD_DAMPING : 1;
    add(`w:${w}`, WORD_WEIGHT * damp);
    if (i > 0) add(`b:${words[i - 1]} ${w}`, BIGRAM_WEIGHT * (STOPWORDS.has(words[i - 1]) ? Math.sqrt(damp) : damp));
    if (damp < 1) continue;
    const padded = `_${w}_`;
    for (let n = 3; n <= 5; n++) {
      for (let j = 0; j + n <= padded.length; j++) add(`c:${padded.slice(j, j + n)}`, NGRAM_WEIGHT);
    }
  }
  return features;
}

export function hashEmbed(text: string, dimensions: number): number[] {
  const v = new Float64Array(dimensions);
  for (const [feature, weight] of hashFeatures(text)) {
    const h = fnv1a(feature);
    const sign = fnv1a(feature, 0x9747b28c) & 1 ? 1 : -1;
    // Sublinear tf on the accumulated weight: repeated features count less and less.
    v[h % dimensions] += sign * (weight >= 1 ? 1 + Math.log(weight) : weight);
  }
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm) || 1;
  return Array.from(v, (x) => x / norm);
}

export function hashEmbedder(dimensions = 512): Embedder {
  return {
    provider: "hash",
    model: `hash-v1-${dimensions}`,
    dimensions,
    maxBatchSize: 256,
    embedNow: (text) => hashEmbed(text, dimensions),
    // Pure CPU (~0.7 ms per 1,400-character chunk): a batch of 256 runs in slices that yield.
    async embed(texts) {
      const slicer = new Slicer();
      const out: number[][] = [];
      for (const t of texts) {
        out.push(hashEmbed(t, dimensions));
        if (slicer.due(1 + (t.length >> 4))) await slicer.pause();
      }
      return out;
    },
  };
}

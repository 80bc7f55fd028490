import type { MemoryKind } from "../../db/schema";
import { porterStem, words } from "../retrieval/tokenize";

/**
 * The rule-based half of memory (offline and free): explicit commands
 * ("remember that …", "please note …", "don't forget …", "forget …"), the
 * durable statements `automatic` retention keeps with `local-extractive`
 * ("my X is Y", "I work at …", "I prefer …", "always …"), the kind of a
 * memory, what it is about (for dedupe), and its entities and relations for
 * the graph. Everything reads the USER's own words only.
 */

export const MAX_MEMORY_CHARS = 1000;
const MAX_NODE_CHARS = 80;

/** Words that say nothing about which memory is meant. */
const STOPWORDS = new Set(
  (
    "a an and are as at be by for from has have how i in is it of on or that the this to was what when where which who why " +
    "will with me my mine our ours we us you your yours do does did can could would should please tell know remember note " +
    "forget again about there their they them he she his her its am been being any some all so if then than just also " +
    "whats what's who's i'm i've don't doesn't"
  ).split(" "),
);

export interface Statement {
  content: string;
  kind: MemoryKind;
}

export interface GraphPart {
  entities: Array<{ name: string; type: string }>;
  relations: Array<{ source: string; target: string; relation: string }>;
}

/** Sentences of a message (a newline or sentence-ending punctuation ends one). */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\n+/)) {
    let start = 0;
    const re = /[.!?]+\s+(?=\S)/g;
    for (let m = re.exec(line); m; m = re.exec(line)) {
      // "Dr. Alvarez", "e.g. this", "J. Smith": an abbreviation or an initial does not end a sentence.
      const before = /(\S+)$/.exec(line.slice(start, m.index))?.[1] ?? "";
      if (m[0].startsWith(".") && (ABBREVIATIONS.has(before.toLowerCase()) || /^[A-Z]$/.test(before) || /\.\w$/.test(before))) continue;
      out.push(line.slice(start, m.index + m[0].trimEnd().length).trim());
      start = m.index + m[0].length;
    }
    out.push(line.slice(start).trim());
  }
  return out.filter(Boolean);
}

const ABBREVIATIONS = new Set("dr mr mrs ms prof st jr sr vs etc inc ltd co no mt ft approx dept e.g i.e".split(" "));

const REMEMBER =
  /^(?:(?:hey|ok|okay|so|and|also|oh)[,!\s]+)?(?:please[,\s]+|pls\s+|can you\s+|could you\s+|would you\s+|i want you to\s+)?(?:please\s+)?(?:remember|note|make a note|take note|keep in mind|don'?t forget|do not forget|never forget|memori[sz]e)(?:\s+(?:that|this|of))?\s*[:,-]?\s+(.+)$/is;
const FORGET =
  /^(?:(?:ok|okay|and|also)[,\s]+)?(?:please[,\s]+|can you\s+|could you\s+)?(?:please\s+)?forget\s+(?:that\s+|about\s+|what i (?:said|told you) about\s+|everything about\s+)?(.+)$/is;

export interface ExplicitCommands {
  remember: string[];
  forget: string[];
}

/** The explicit memory commands of a message, in order. */
export function explicitCommands(message: string): ExplicitCommands {
  const out: ExplicitCommands = { remember: [], forget: [] };
  for (const s of sentences(message)) {
    const r = REMEMBER.exec(s);
    if (r) {
      const content = tidy(r[1]);
      if (content) out.remember.push(content);
      continue;
    }
    const f = FORGET.exec(s);
    if (f) {
      const what = f[1].trim().replace(/[.!?]+$/, "").trim();
      if (what) out.forget.push(what);
    }
  }
  return out;
}

/** True when a sentence is an explicit memory command (automatic extraction leaves those to the command path). */
export const isCommand = (sentence: string) => REMEMBER.test(sentence) || FORGET.test(sentence);

/** Capitalized, trailing question marks dropped, ended with a period, at most MAX_MEMORY_CHARS. */
export function tidy(text: string): string {
  let t = text.replace(/\s+/g, " ").trim().replace(/[?!,;:\s]+$/, "").trim();
  if (!t) return "";
  t = t[0].toUpperCase() + t.slice(1);
  if (!/[.!]$/.test(t)) t += ".";
  return t.length > MAX_MEMORY_CHARS ? t.slice(0, MAX_MEMORY_CHARS - 1).trimEnd() + "…" : t;
}

const INSTRUCTION = /^(?:please\s+)?(?:always|never|don'?t|do not|call me|answer|reply|respond|write|use|address me|speak|talk)\b/i;
const PREFERENCE = /\b(?:prefer|prefers|preferred|like|likes|love|loves|enjoy|enjoys|hate|hates|dislike|dislikes|favou?rite|rather)\b/i;

export function kindOf(content: string): MemoryKind {
  if (INSTRUCTION.test(content)) return "instruction";
  if (PREFERENCE.test(content)) return "preference";
  return "fact";
}

/** Stemmed content words (stopwords dropped). */
export function contentStems(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w))
    .map(porterStem);
}

/** Terms for matching memories against a question: distinct content words (each tokenized as FTS5 does). */
export function matchWords(text: string, max = 24): string[] {
  const seen = new Map<string, string>();
  for (const w of words(text)) {
    if (STOPWORDS.has(w)) continue;
    const stem = porterStem(w);
    if (!seen.has(stem)) seen.set(stem, w);
    if (seen.size >= max) break;
  }
  return [...seen.values()];
}

const COPULA = /^(.{2,80}?)\s+(?:is|are|was|were|=|equals|is now|are now)\s+(.+)$/i;
const CALL_ME = /^(?:please\s+)?call me\s+(.+)$/i;

/**
 * What a memory is about, so that a restatement updates it instead of adding
 * a copy: "My project code is ZEBRA-42" and "my project code is now KOALA-7"
 * share the key `project code`. Without a "… is …" shape, the key is the
 * sorted content words (an exact restatement).
 */
export function dedupeKey(content: string): string {
  const text = content.replace(/[.!]+$/, "");
  if (CALL_ME.test(text) || /^my name is\s/i.test(text)) return "is:name";
  const m = COPULA.exec(text);
  if (m) {
    const about = contentStems(m[1]);
    if (about.length) return "is:" + about.join(" ");
  }
  return "all:" + [...new Set(contentStems(text))].sort().join(" ");
}

/** Jaccard similarity of two texts' content-word stems. */
export function similarity(a: string, b: string): number {
  const x = new Set(contentStems(a));
  const y = new Set(contentStems(b));
  if (!x.size || !y.size) return 0;
  let both = 0;
  for (const s of x) if (y.has(s)) both++;
  return both / (x.size + y.size - both);
}

const DURABLE: Array<{ re: RegExp; kind?: MemoryKind }> = [
  { re: /^(?:my|our)\s+[\w' -]{1,60}?\s+(?:is|are|was|were)\s+\S.*$/i },
  { re: /^i(?:'m| am)\s+(?:a|an)\s+\S.*$/i },
  { re: /^i(?:'m| am)\s+(?:from|based in|allergic to|vegetarian|vegan)\b.*$/i },
  { re: /^i\s+(?:work|worked)\s+(?:at|for|as|on|in)\s+\S.*$/i },
  { re: /^i\s+(?:live|lived)\s+in\s+\S.*$/i },
  { re: /^i\s+(?:have|own)\s+(?:a|an|two|three|\d+)\s+\S.*$/i },
  { re: /^i\s+(?:prefer|like|love|enjoy|hate|dislike|don'?t like|do not like)\s+\S.*$/i, kind: "preference" },
  { re: /^(?:please\s+)?(?:always|never)\s+\S.*$/i, kind: "instruction" },
  { re: /^(?:please\s+)?call me\s+\S.*$/i, kind: "instruction" },
  { re: /^(?:please\s+)?(?:answer|reply|respond|write)\s+(?:in|with|using)\s+\S.*$/i, kind: "instruction" },
];

/**
 * Durable statements of a user's message, by rule (automatic retention with
 * local-extractive): first-person facts, preferences and standing
 * instructions. Questions, commands handled elsewhere and passing remarks are
 * left out.
 */
export function durableStatements(message: string): Statement[] {
  const out: Statement[] = [];
  for (const s of sentences(message)) {
    if (s.endsWith("?") || isCommand(s)) continue;
    const text = s.replace(/^(?:also|and|btw|by the way|fyi|oh|ok|okay|so)[,\s]+/i, "");
    for (const rule of DURABLE) {
      if (rule.re.test(text)) {
        const content = tidy(text);
        if (content) out.push({ content, kind: rule.kind ?? kindOf(content) });
        break;
      }
    }
  }
  return out;
}

const nodeName = (s: string) => {
  const t = s.replace(/^(?:the|a|an)\s+/i, "").replace(/[.!?,;:]+$/, "").trim();
  return t.length > MAX_NODE_CHARS ? t.slice(0, MAX_NODE_CHARS).trimEnd() : t;
};

function typeOf(name: string, hint?: string): string {
  if (hint) return hint;
  if (/\d/.test(name) && /^[\w-]+$/.test(name)) return "identifier";
  if (/^[A-Z]/.test(name)) return "entity";
  return "concept";
}

const SELF = "User";
const RELATION_PATTERNS: Array<{ re: RegExp; relation: string | ((m: RegExpExecArray) => string); type?: string }> = [
  { re: /^(?:please\s+)?call me\s+(.+)$/i, relation: "name", type: "person" },
  { re: /^my name is\s+(.+)$/i, relation: "name", type: "person" },
  { re: /^(?:my|our)\s+([\w' -]{1,60}?)\s+(?:is|are|was|were)(?:\s+now)?\s+(.+)$/i, relation: (m) => m[1].toLowerCase() },
  { re: /^i\s+(?:work|worked)\s+(at|for)\s+(.+)$/i, relation: (m) => `works ${m[1].toLowerCase()}`, type: "organization" },
  { re: /^i\s+(?:work|worked)\s+as\s+(?:a|an)?\s*(.+)$/i, relation: "works as", type: "role" },
  { re: /^i\s+(?:live|lived)\s+in\s+(.+)$/i, relation: "lives in", type: "location" },
  { re: /^i(?:'m| am)\s+from\s+(.+)$/i, relation: "is from", type: "location" },
  { re: /^i(?:'m| am)\s+(?:a|an)\s+(.+)$/i, relation: "is a", type: "role" },
  { re: /^i\s+(prefer|like|love|enjoy|hate|dislike)\s+(.+)$/i, relation: (m) => m[1].toLowerCase(), type: "concept" },
];

/**
 * Entities and relations of one memory, by rule: the user ("User") when the
 * memory speaks in the first person, the value of "my X is Y" / "I work at Y"
 * shapes (edge User -[X]-> Y), and named things (capitalized words, codes)
 * the user is linked to by `mentions`.
 */
export function graphOf(content: string): GraphPart {
  const text = content.replace(/[.!]+$/, "").trim();
  const entities = new Map<string, { name: string; type: string }>();
  const relations: GraphPart["relations"] = [];
  const addEntity = (name: string, type: string) => {
    const n = nodeName(name);
    if (!n) return null;
    const key = n.toLowerCase();
    if (!entities.has(key)) entities.set(key, { name: n, type });
    return entities.get(key)!.name;
  };
  const firstPerson = /^(?:(?:please\s+)?call me|my|our|i|i'm)\b/i.test(text);
  const self = firstPerson ? addEntity(SELF, "person") : null;
  let valueName: string | null = null;
  for (const p of RELATION_PATTERNS) {
    const m = p.re.exec(text);
    if (!m || !self) continue;
    const value = m[m.length - 1];
    valueName = addEntity(value, typeOf(nodeName(value), p.type));
    if (valueName) relations.push({ source: self, target: valueName, relation: typeof p.relation === "string" ? p.relation : p.relation(m) });
    break;
  }
  // Named things: runs of capitalized words not opening the sentence, and codes with digits.
  const named = text.match(/(?<!^)\b(?:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)|\b[A-Za-z]*\d[\w-]*\b/g) ?? [];
  for (const raw of named) {
    const n = nodeName(raw);
    // Bare numbers ("opens at 9") are values, not things: only the "my X is 42" shape makes them a node.
    if (!n || n === SELF || n === "I" || /^(?:I'm|I've|I'd)$/.test(n) || /^\d+$/.test(n)) continue;
    if (valueName && valueName.toLowerCase().includes(n.toLowerCase())) continue;
    const name = addEntity(n, typeOf(n));
    if (name && self) relations.push({ source: self, target: name, relation: "mentions" });
  }
  return { entities: [...entities.values()], relations };
}

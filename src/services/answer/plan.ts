import { terms } from "../../lib/text";

/**
 * Heuristic decomposition of a question into parts for deep mode (used as the
 * plan with every model, and as the whole research strategy with
 * local-extractive): several questions, comparisons ("compare X and Y",
 * "X vs Y", "difference between X and Y") and conjunctions of independent
 * asks ("A and also B").
 */
export const MAX_PARTS = 4;

const hasSubstance = (s: string) => terms(s).length >= 2;

export function decompose(question: string): string[] {
  const q = question.replace(/\s+/g, " ").trim();
  if (!q) return [];
  const parts: string[] = [];

  // 1. Several questions in one message.
  const asks = q.split(/(?<=\?)\s+/).map((s) => s.trim()).filter(Boolean);
  for (const ask of asks) {
    // 2. Comparisons.
    const cmp =
      /\b(?:compare|comparison of|contrast|differences? between)\s+(.+?)\s+(?:and|with|to|vs\.?|versus)\s+(.+?)[?.!]*$/i.exec(ask) ??
      /^(?:what(?:'s| is| are)?\s+)?(.+?)\s+(?:vs\.?|versus)\s+(.+?)[?.!]*$/i.exec(ask);
    if (cmp && hasSubstance(`${cmp[1]} x`) && hasSubstance(`${cmp[2]} x`)) {
      parts.push(cmp[1].trim(), cmp[2].trim());
      continue;
    }
    // 3. Independent asks joined by "and also", "as well as", ";", " and what/how/...".
    const pieces = ask
      .split(/;|\band also\b|\bas well as\b|\band (?=(?:what|how|why|when|where|who|which|whether)\b)/i)
      .map((s) => s.trim().replace(/^(?:and|also)\s+/i, ""))
      .filter(Boolean);
    if (pieces.length > 1 && pieces.every(hasSubstance)) parts.push(...pieces);
    else parts.push(ask);
  }
  const tidy = (p: string) => {
    const t = p.replace(/^(?:and|also|but|or|then|plus)\s+/i, "").replace(/[?.!]+$/, "").trim();
    return t.charAt(0).toUpperCase() + t.slice(1);
  };
  const unique = [...new Set(parts.map(tidy).filter(Boolean))];
  return unique.slice(0, MAX_PARTS);
}

import type { Source } from "../../db/schema";
import { passagesToSources, type Passage } from "../../contracts/turn";

/** Most sources one answer may cite (initial retrieval plus every tool result). */
export const MAX_TURN_SOURCES = 40;

/**
 * The turn's numbered sources. Passages from every tool accumulate here in
 * the order they arrive; a passage seen before keeps its first number, so a
 * citation `[n]` always points at the same source, whichever tool found it.
 */
export class SourceLedger {
  private readonly list: Source[] = [];
  private readonly seen = new Map<string, number>();

  constructor(private readonly max = MAX_TURN_SOURCES) {}

  private key(p: Passage): string {
    return p.memory_id ? `m:${p.memory_id}` : p.chunk_id ? `c:${p.chunk_id}` : `u:${p.url ?? p.filename ?? ""}|${p.text.slice(0, 120)}`;
  }

  /** Adds passages; returns the sources they are (new or already known), in order, without duplicates. */
  add(passages: Passage[]): Source[] {
    const out: Source[] = [];
    for (const p of passages) {
      const k = this.key(p);
      const known = this.seen.get(k);
      if (known !== undefined) {
        if (!out.some((s) => s.index === known)) out.push(this.list[known - 1]);
        continue;
      }
      if (this.list.length >= this.max) continue;
      const [source] = passagesToSources([p], this.list.length);
      this.list.push(source);
      this.seen.set(k, source.index);
      out.push(source);
    }
    return out;
  }

  get all(): Source[] {
    return this.list;
  }

  get size(): number {
    return this.list.length;
  }
}

import type { Message } from "../db/schema";
import type { TurnResult } from "../services/answer/turn";

/**
 * Whether the chat read by the Worker in a turn's one batch (src/services/chats/turn-reads.ts) is still current
 * when the turn reaches the chat's Durable Object. Turns of a chat run only here, one at a time, and every turn
 * writes the transcript (its user message, then its answer — also when stopped, replaced or failed), so the
 * Worker's read is current exactly when no turn of this object wrote past the end the Worker saw. Then the
 * object uses the Worker's chat row (no second read) and announces the user message at `maxSeq + 1` before its
 * write lands. Otherwise — a turn ran in between, one was replaced, one crashed — the turn reads the chat again
 * and writes its user message first, as before.
 *
 * The object also holds the chat's recent transcript (since its rolling summary) after each of its turns, stamped
 * with the transcript's end; the next turn whose Worker read finds the same end (same last `seq`, same number of
 * messages: nothing added or deleted since) takes its history from there instead of reading it again.
 *
 * Not covered: a write to the transcript from outside the chat's turns between the Worker's read and the
 * object's insert. The only one is the supervisor settling a turn whose worker died 30 s earlier (an
 * `interrupted` placeholder). The user message is still inserted after it (its position is taken at the insert,
 * `MAX(seq) + 1`, and `seq` is not part of the public message), so nothing a client sees differs; the turn's
 * history merely leaves that placeholder out (logged).
 */
export class TranscriptEnd {
  /** The highest `seq` this object's turns wrote; Infinity once a turn crashed (its writes are unknown). */
  private written = 0;
  /**
   * The chat's messages since its summary as of this object's last turn, and the transcript's end then (its last
   * `seq` and number of messages): the next turn's history, when the Worker's read finds the transcript unchanged.
   */
  private held: { messages: Message[]; maxSeq: number; count: number } | null = null;
  knownEnd(cmd: { chat?: { id: string }; chatId: string; transcript?: { maxSeq: number; count: number } }) {
    const t = cmd.transcript;
    if (!t || cmd.chat?.id !== cmd.chatId || this.written > t.maxSeq) return undefined;
    const held = this.held && this.held.maxSeq === t.maxSeq && this.held.count === t.count ? this.held.messages : undefined;
    return { nextSeq: t.maxSeq + 1, count: t.count, emptyHistory: t.count === 0, recent: held };
  }

  /** Follows a turn: what it wrote moves the end this object knows, and its messages are held for the next one. */
  follow(turn: Promise<TurnResult>, known: { nextSeq: number; count?: number } | undefined): Promise<TurnResult> {
    const base = known && known.count !== undefined ? { maxSeq: known.nextSeq - 1, count: known.count } : null;
    this.held = null;
    return turn.then(
      (r) => {
        this.written = Math.max(this.written, r.assistantMessage.seq, r.userMessage.seq);
        if (base && r.transcript && r.userMessage.seq === base.maxSeq + 1 && r.assistantMessage.seq === base.maxSeq + 2) {
          this.held = { messages: [...r.transcript, r.userMessage, r.assistantMessage].slice(-400), maxSeq: r.assistantMessage.seq, count: base.count + 2 };
        }
        return r;
      },
      (e: unknown) => {
        this.written = Infinity;
        throw e;
      },
    );
  }
}

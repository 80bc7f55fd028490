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
 * Not covered: a write to the transcript from outside the chat's turns between the Worker's read and the
 * object's insert. The only one is the supervisor settling a turn whose worker died 30 s earlier (an
 * `interrupted` placeholder). The user message is still inserted after it (its position is taken at the insert,
 * `MAX(seq) + 1`, and `seq` is not part of the public message), so nothing a client sees differs; the turn's
 * history merely leaves that placeholder out (logged).
 */
export class TranscriptEnd {
  /** The highest `seq` this object's turns wrote; Infinity once a turn crashed (its writes are unknown). */
  private written = 0;

  knownEnd(cmd: { chat?: { id: string }; chatId: string; transcript?: { maxSeq: number; count: number }; userMessageId?: string }) {
    const t = cmd.transcript;
    if (!t || cmd.chat?.id !== cmd.chatId || cmd.userMessageId || this.written > t.maxSeq) return undefined;
    return { nextSeq: t.maxSeq + 1, emptyHistory: t.count === 0 };
  }

  /** Follows a turn: what it wrote moves the end this object knows. */
  follow(turn: Promise<TurnResult>): Promise<TurnResult> {
    return turn.then(
      (r) => {
        this.written = Math.max(this.written, r.assistantMessage.seq, r.userMessage.seq);
        return r;
      },
      (e: unknown) => {
        this.written = Infinity;
        throw e;
      },
    );
  }
}

import type { Message } from "../../db/schema";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { beginTurn } from "../chats/answer-record";
import { leaseUntil } from "../recovery/leases";
import { isLocal, type TurnDeps, type TurnRequest } from "./context";

/**
 * A turn's record: the user message's write, which also records the turn and its lease (beginTurn, README
 * "Crash safety"). When the chat's Durable Object knows where the transcript ends (`req.known`), the message is
 * announced at once and written alongside the turn's first steps (history, search): the checkpoints wait for it
 * (`written`), and the final write appends the message itself if its own write has not landed yet (so a quick
 * answer does not wait for it). Otherwise it is written first.
 *
 * A chat's first turn, answered by `POST /chats` (its user message id fixed by the create), is announced the
 * same way: the create wrote the chat and knows its transcript, so the message's write and the answer's final
 * write travel together (one round trip fewer per create).
 *
 * A quick answer of the offline model waits on nothing outside the service, so its record waits: the turn is
 * written once, by its final write (one D1 call fewer per answer, bench:cpu). Its record is written anyway once
 * the turn has run for RECORD_GRACE_MS, or when something needs it first (a checkpoint).
 */
export const RECORD_GRACE_MS = 1_000;

export interface TurnRecord {
  /** The user message as announced (its id, and its place in the chat). */
  readonly announced: Message;
  /** The user message's write, started now if it was waiting: the answer's checkpoints come after it. */
  written(): Promise<Message>;
  /**
   * For the final write: the user message to append, when its own write has not landed (a write still waiting
   * is dropped; the final write records the message instead).
   */
  toAppend(): Message | undefined;
  /** The user message as the chat has it, once the final write is done (`appended`: its row, when it appended one). */
  settled(appended: Message | undefined): Promise<Message>;
}

export async function startTurnRecord(deps: TurnDeps, req: TurnRequest, assistantId: string): Promise<TurnRecord> {
  const metadata = {
    ...(req.images?.length ? { imageUrls: req.images.map((i) => i.url) } : {}),
    ...(req.attachments?.length ? { attachedArtifactIds: req.attachments.map((a) => a.id) } : {}),
    ...(req.runId ? { run_id: req.runId } : {}),
  };
  const turn = () => ({ messageId: assistantId, leaseUntil: leaseUntil() });
  const known = req.known;
  if (!known) {
    const row = await beginTurn(deps.db, req.chat.id, { id: req.userMessageId, content: req.content, metadata }, turn());
    return { announced: row, written: () => Promise.resolve(row), toAppend: () => undefined, settled: () => Promise.resolve(row) };
  }
  const draft: Message = { id: req.userMessageId ?? newId("msg"), chatId: req.chat.id, seq: known.nextSeq, role: "user", content: req.content, status: "complete", metadata, createdAt: nowIso() };
  let writing: Promise<Message> | null = null;
  let landed = false;
  let closed = false; // the final write has taken the message: no write of its own starts any more
  const start = () => {
    if (!writing && !closed) {
      writing = beginTurn(deps.db, req.chat.id, { id: draft.id, content: draft.content, metadata, createdAt: draft.createdAt }, turn(), true).then((m) => {
        landed = true;
        if (m.seq !== draft.seq) console.warn(`chat ${req.chat.id}: user message ${m.id} was announced at seq ${draft.seq} and written at ${m.seq}`);
        return m;
      });
      writing.catch(() => {}); // awaited by the checkpoints and the final write
    }
    return writing;
  };
  // A chat's first message (its id fixed by the create) is written at once, never left to the final write: a
  // retried create looks for it (src/services/chats/replay.ts).
  const waits = isLocal(req.model) && req.mode === "quick" && !req.userMessageId;
  const timer = waits ? setTimeout(start, RECORD_GRACE_MS) : (start(), null);
  return {
    announced: draft,
    written: () => start() ?? Promise.resolve(draft),
    toAppend: () => {
      if (timer) clearTimeout(timer);
      closed = true;
      return landed ? undefined : draft;
    },
    // The message's own write, or the final write's row; a failed own write does not matter once the final write appended it.
    settled: (appended) => (writing ? (appended ? writing.catch(() => appended) : writing) : Promise.resolve(appended ?? draft)),
  };
}

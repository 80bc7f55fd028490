import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import type { Message, MessageMetadata } from "../../db/schema";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { registerRecovery } from "../recovery/supervisor";

/**
 * The record of a turn in flight (README "Crash safety"). A chat has at most one turn at a time; while it runs,
 * the chat row names the id its answer is saved under (`turn_message_id`) and holds the turn's lease, renewed by
 * the answer's checkpoints. The answer itself is saved under that id as it streams (status `partial`, flagged
 * `in_progress`) and finally replaced by the finished answer. A turn whose lease lapsed lost its worker: the
 * supervisor settles it with what was saved (`settleLapsedTurns`).
 */

type Stmt = D1PreparedStatement;

/** A message row's columns, as messageOfRow reads them. */
const MESSAGE_COLUMNS = "id, chat_id, seq, role, content, status, metadata, created_at";

type AnswerFields = { id: string; content: string; status: Message["status"]; metadata: MessageMetadata; createdAt: string };

/**
 * The answer as the chat keeps it: inserted after the chat's last message the first time, replaced afterwards.
 * It returns only what the database decides (its position, and the first save's time); answerOfRow makes the
 * message of it with the fields that were written.
 */
export function upsertAnswerStatement(d1: D1Database, chatId: string, m: AnswerFields): Stmt {
  return d1
    .prepare(
      `INSERT INTO messages (id, chat_id, seq, role, content, status, metadata, created_at)
       SELECT ?1, ?2, COALESCE(MAX(seq), 0) + 1, 'assistant', ?3, ?4, ?5, ?6 FROM messages WHERE chat_id = ?2
       ON CONFLICT (id) DO UPDATE SET content = excluded.content, status = excluded.status, metadata = excluded.metadata
       RETURNING seq, created_at`,
    )
    .bind(m.id, chatId, m.content, m.status, JSON.stringify(m.metadata), m.createdAt);
}

/** The answer upsertAnswerStatement wrote, from its returned row. */
export const answerOfRow = (chatId: string, m: AnswerFields, r: { seq: number; created_at: string }): Message => ({
  id: m.id,
  chatId,
  seq: r.seq,
  role: "assistant",
  content: m.content,
  status: m.status,
  metadata: m.metadata,
  createdAt: r.created_at,
});

/** Renews the turn's lease (only while it is still the chat's turn). */
export function renewTurnStatement(d1: D1Database, chatId: string, messageId: string, leaseUntil: string): Stmt {
  return d1
    .prepare("UPDATE chats SET turn_lease_expires_at = ?3 WHERE id = ?1 AND turn_message_id = ?2")
    .bind(chatId, messageId, leaseUntil);
}

/**
 * The turn is over: the chat no longer has one in flight (when it still names this turn), and its message
 * counters (kept by triggers on messages) come back as the final write leaves them. One statement for both: a
 * quick answer's turn often never recorded a lease, and the counters are read all the same.
 */
export function endTurnStatement(d1: D1Database, chatId: string, messageId: string): Stmt {
  return d1
    .prepare(
      `UPDATE chats SET
         turn_message_id = CASE WHEN turn_message_id = ?2 THEN NULL ELSE turn_message_id END,
         turn_lease_expires_at = CASE WHEN turn_message_id = ?2 THEN NULL ELSE turn_lease_expires_at END
       WHERE id = ?1
       RETURNING message_count, last_message_at`,
    )
    .bind(chatId, messageId);
}

type Row = { id: string; chat_id: string; seq: number; role: Message["role"]; content: string; status: Message["status"]; metadata: string; created_at: string };

export const messageOfRow = (r: Row): Message => ({
  id: r.id,
  chatId: r.chat_id,
  seq: r.seq,
  role: r.role,
  content: r.content,
  status: r.status,
  metadata: JSON.parse(r.metadata) as MessageMetadata,
  createdAt: r.created_at,
});

/**
 * Runs `statements` as one D1 batch, retried when a concurrent insert took the answer's position in the chat
 * (UNIQUE (chat_id, seq)); returns the rows each statement returned.
 */
export async function batchWithRetry(d1: D1Database, statements: () => Stmt[]): Promise<D1Result[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await d1.batch(statements());
    } catch (e) {
      if (attempt < 3 && isUniqueViolation(e)) continue;
      throw e;
    }
  }
}

/**
 * The user's message appended after the chat's last message, returning its row (messageOfRow reads it). With
 * `ifAbsent`, nothing is added when its id is already there, and the row there is returned: the conflict's
 * update sets a plain column to itself (not the key, which other rows reference), since a DO NOTHING would
 * return no row and reading it back would cost a statement.
 */
export function insertUserStatement(
  d1: D1Database,
  chatId: string,
  m: { id: string; content: string; metadata: MessageMetadata; createdAt: string },
  ifAbsent: boolean,
): Stmt {
  return d1
    .prepare(
      `INSERT INTO messages (id, chat_id, seq, role, content, status, metadata, created_at)
       SELECT ?1, ?2, COALESCE(MAX(seq), 0) + 1, 'user', ?3, 'complete', ?4, ?5 FROM messages WHERE chat_id = ?2
       ${ifAbsent ? "ON CONFLICT (id) DO UPDATE SET role = messages.role" : ""}
       RETURNING ${MESSAGE_COLUMNS}`,
    )
    .bind(m.id, chatId, m.content, JSON.stringify(m.metadata), m.createdAt);
}

/** The chat's message counters (kept by triggers on messages) as the turn's final write leaves them. */
export interface ChatCounters {
  messageCount: number;
  lastMessageAt: string | null;
}

/**
 * The turn starts: the user's message is appended and the chat records the turn and its lease, in one write. A
 * given `userMessageId` makes a retried start find its message instead of adding another (a unique violation).
 *
 * An announced turn (`announced`: its message id was chosen by the chat's Durable Object, which does not wait for
 * this write) races its own final write, which appends the user message too when it is not there yet
 * (src/services/answer/stages/finish.ts): so a quick answer is done one round trip sooner. Whichever lands second
 * finds the message there and adds nothing, and a turn already finished records no lease.
 */
export async function beginTurn(
  db: Database,
  chatId: string,
  user: { id?: string; content: string; metadata: MessageMetadata; createdAt?: string },
  turn: { messageId: string; leaseUntil: string },
  announced = false,
): Promise<Message> {
  const d1 = db.$client;
  const m = { ...user, id: user.id ?? newId("msg"), createdAt: user.createdAt ?? nowIso() };
  const results = await batchWithRetry(d1, () => [
    insertUserStatement(d1, chatId, m, announced),
    d1
      .prepare("UPDATE chats SET turn_message_id = ?2, turn_lease_expires_at = ?3 WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM messages WHERE id = ?2)")
      .bind(chatId, turn.messageId, turn.leaseUntil),
  ]);
  return messageOfRow(results[0].results[0] as Row);
}

/** What an interrupted turn's answer says when nothing had been saved yet. */
const INTERRUPTED = {
  code: "interrupted",
  message: "The answer was interrupted before any text was produced (the service stopped); send the message again",
};

/**
 * Settles one interrupted turn (if its lease is still lapsed at `at`): the saved answer loses `in_progress` and
 * says `stop_reason: interrupted`; with nothing saved, an empty `error` answer is added under the turn's id.
 */
export async function settleTurn(db: Database, chatId: string, messageId: string, at: string): Promise<void> {
  const d1 = db.$client;
  const still = "EXISTS (SELECT 1 FROM chats WHERE id = ?1 AND turn_message_id = ?2 AND turn_lease_expires_at < ?3)";
  const placeholder = JSON.stringify({ sources: [], usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, credits: 0 }, error: INTERRUPTED, stop_reason: "interrupted" });
  await d1.batch([
    d1
      .prepare(
        `UPDATE messages SET metadata = json_set(json_remove(metadata, '$.in_progress'), '$.stop_reason', 'interrupted')
         WHERE id = ?2 AND json_extract(metadata, '$.in_progress') IS NOT NULL AND ${still}`,
      )
      .bind(chatId, messageId, at),
    d1
      .prepare(
        `INSERT INTO messages (id, chat_id, seq, role, content, status, metadata, created_at)
         SELECT ?2, ?1, next.seq, 'assistant', '', 'error', json_set(?4, '$.model', (SELECT model FROM chats WHERE id = ?1)), ?3
         FROM (SELECT COALESCE(MAX(seq), 0) + 1 AS seq FROM messages WHERE chat_id = ?1) AS next
         WHERE NOT EXISTS (SELECT 1 FROM messages WHERE id = ?2) AND ${still}`,
      )
      .bind(chatId, messageId, at, placeholder),
    d1
      .prepare("UPDATE chats SET turn_message_id = NULL, turn_lease_expires_at = NULL WHERE id = ?1 AND turn_message_id = ?2 AND turn_lease_expires_at < ?3")
      .bind(chatId, messageId, at),
  ]);
}

/** Turns whose lease lapsed, settled per pass. */
const LAPSED_PER_PASS = 100;

/**
 * Settles the turns whose worker is gone: the answer saved so far stays (`partial`, `stop_reason: interrupted`,
 * charged for what it holds by its checkpoints — nothing more is charged), or, when nothing was saved, an empty
 * `error` answer says the turn was interrupted. Every statement re-checks that the lease is still lapsed, so a
 * turn that renews meanwhile is left alone. Returns when to look again.
 */
export async function settleLapsedTurns(db: Database, now = Date.now()): Promise<number | null> {
  const at = new Date(now).toISOString();
  const lapsed = await db.all<{ id: string; turn_message_id: string }>(sql`
    SELECT id, turn_message_id FROM chats WHERE turn_lease_expires_at IS NOT NULL AND turn_lease_expires_at < ${at}
    LIMIT ${LAPSED_PER_PASS}`);
  for (const chat of lapsed) await settleTurn(db, chat.id, chat.turn_message_id, at);
  if (lapsed.length === LAPSED_PER_PASS) return now + 100;
  const next = await db.get<{ at: string | null }>(sql`SELECT MIN(turn_lease_expires_at) AS at FROM chats WHERE turn_lease_expires_at IS NOT NULL`);
  return next?.at ? Date.parse(next.at) + 1_000 : null;
}

registerRecovery("turns", 10, ({ db, now }) => settleLapsedTurns(db, now));

import type { MessageMetadata } from "../../db/schema";
import { chargeStatements } from "../billing/metering";
import { batchWithRetry, renewTurnStatement, upsertAnswerStatement } from "../chats/answer-record";
import { heartbeat, HEARTBEAT_MS, leaseUntil } from "../recovery/leases";
import { nowIso } from "../../lib/time";
import type { TurnContext } from "./context";

/** A streaming answer is saved at most this often (and at its first words). */
export const CHECKPOINT_MS = 500;

/**
 * Saves a turn's answer as it streams (README "Crash safety"): at most every CHECKPOINT_MS while new text comes
 * (the first time CHECKPOINT_MS after the turn started, so a quick answer is saved once, by its final write), in ONE write,
 * the text so far (status `partial`, flagged `in_progress`), the charge for it (metering's chargeStatements: the
 * turn's charge is set, not added, so the final write charges exactly the difference) and the turn's lease. The
 * lease is also renewed every HEARTBEAT_MS while no text comes (tool calls, a slow model). If the worker dies, the
 * chat keeps a `partial` answer charged for what it holds, and the supervisor settles it when the lease lapses.
 * Writes never overlap and never hold up the stream; a failed one is logged and the next one catches up.
 */
export class AnswerCheckpoint {
  private content = "";
  private savedLength = 0;
  /** Counted from the turn's start: an answer complete within CHECKPOINT_MS is saved once, by the final write. */
  private lastWrite = Date.now();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private writing: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly createdAt = nowIso();
  private readonly stopBeating: () => void;

  constructor(
    private readonly ctx: TurnContext,
    readonly messageId: string,
  ) {
    this.stopBeating = heartbeat(`turn ${messageId}`, HEARTBEAT_MS, async () => this.flush());
  }

  /**
   * The answer so far (called with every new piece of text). Nothing is written on the token's path: one timer
   * per CHECKPOINT_MS coalesces every piece that came meanwhile into one write.
   */
  progress(content: string): void {
    this.content = content;
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, Math.max(0, CHECKPOINT_MS - (Date.now() - this.lastWrite)));
  }

  /** Stops saving and waits for a write in flight: the turn's final write comes after it (and replaces a pending one). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopBeating();
    while (this.writing) await this.writing;
  }

  private flush(): void {
    if (this.closed) return;
    if (this.writing) {
      this.again = true;
      return;
    }
    this.writing = this.write()
      .catch((e) => console.warn(`checkpoint of turn ${this.messageId} failed:`, e instanceof Error ? e.message : e))
      .finally(() => {
        this.writing = null;
        if (this.again) {
          this.again = false;
          this.flush();
        }
      });
  }

  private async write(): Promise<void> {
    const { req, deps } = this.ctx;
    const d1 = deps.db.$client;
    const content = this.content;
    const statements = [renewTurnStatement(d1, req.chat.id, this.messageId, leaseUntil())];
    if (content.length > this.savedLength) {
      const charge = this.charge(d1, content);
      statements.unshift(...charge.statements, upsertAnswerStatement(d1, req.chat.id, { id: this.messageId, content, status: "partial", metadata: this.metadata(charge.recorded), createdAt: this.createdAt }));
    }
    this.lastWrite = Date.now();
    await this.ctx.userWritten(); // the answer goes after the user message in the chat
    if (this.closed) return; // the final write is next and replaces it
    await batchWithRetry(d1, () => statements);
    this.savedLength = Math.max(this.savedLength, content.length);
  }

  /** What the text so far costs: the tokens counted so far, and at least the text's own length in output tokens. */
  private charge(d1: D1Database, content: string) {
    const { req, used } = this.ctx;
    const { chat, model } = req;
    return chargeStatements(d1, {
      organizationId: chat.organizationId,
      tenantId: chat.tenantId,
      operation: req.operation,
      model: model.id,
      pricing: model.pricing,
      usage: { input_tokens: used.input_tokens, output_tokens: Math.max(used.output_tokens, Math.ceil(content.length / 4)) },
      actor: req.actor,
      chatId: chat.id,
      messageId: this.messageId,
      agentRunId: req.runId ?? null,
      idempotencyKey: `turn:${this.messageId}`,
    });
  }

  private metadata(recorded: ReturnType<typeof chargeStatements>["recorded"]): MessageMetadata {
    const { req, ledger, contextMetadata } = this.ctx;
    return {
      sources: ledger.all,
      usage: { input_tokens: recorded.input_tokens, output_tokens: recorded.output_tokens, total_tokens: recorded.total_tokens, credits: recorded.credits },
      model: req.model.id,
      memoryUsed: false,
      ...contextMetadata,
      ...(req.runId ? { run_id: req.runId } : {}),
      // What the answer says if its worker dies now (the supervisor drops `in_progress`).
      stop_reason: "interrupted",
      in_progress: true,
    };
  }
}

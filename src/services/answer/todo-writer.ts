import type { Database } from "../../db/client";
import type { ChatTodo } from "../../db/schema";
import { setTodo } from "../chats/chats";

/**
 * A deep turn's todo list, saved off the turn's path (README "Latency"). The list changes several times before
 * the answer starts (each part searched, then the answer); each change is streamed as a `todo_update` at once and
 * saved in the background: one write at a time, the latest list each time (changes made while a write is in
 * flight are saved together by the next). `settled()` waits until the latest list is saved: the turn's `done`
 * comes after it, so GET /chats/:id/todo then shows it. A failed save is logged and the next one catches up;
 * it never fails the answer.
 */
export class TodoWriter {
  private latest: ChatTodo | null = null;
  private writing: Promise<void> | null = null;

  constructor(
    private readonly db: Database,
    private readonly chatId: string,
  ) {}

  /** Saves `todo` (a copy) after any write in flight. */
  save(todo: ChatTodo): void {
    this.latest = structuredClone(todo);
    if (!this.writing) this.writing = this.drain();
  }

  /** Resolves once the latest list is saved (or its write failed). */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.latest) {
        const todo = this.latest;
        this.latest = null;
        try {
          await setTodo(this.db, this.chatId, todo);
        } catch (e) {
          console.warn(`todo of chat ${this.chatId} not saved:`, e instanceof Error ? e.message : e);
        }
      }
    } finally {
      this.writing = null;
    }
  }
}

/**
 * Things a turn's tools may share for the length of the turn (an MCP connection used by several calls, say),
 * each created on first use and closed when the turn's tools are done. A value whose creation failed, or that
 * a tool reports broken, is dropped, so the next use creates it again.
 */
export class TurnResources {
  private readonly items = new Map<string, { value: Promise<unknown>; close: (v: never) => Promise<void> }>();

  /** The turn's value for `key`, created by `create` on first use; `close` runs when the turn ends. */
  shared<T>(key: string, create: () => Promise<T>, close: (v: T) => Promise<void>): Promise<T> {
    const existing = this.items.get(key);
    if (existing) return existing.value as Promise<T>;
    const value = create();
    this.items.set(key, { value, close: close as (v: never) => Promise<void> });
    value.catch(() => this.items.get(key)?.value === value && this.items.delete(key));
    return value;
  }

  /** Closes and forgets `key` (it broke): the next use creates a new one. */
  async drop(key: string): Promise<void> {
    const item = this.items.get(key);
    if (!item) return;
    this.items.delete(key);
    await item.value.then((v) => item.close(v as never)).catch(() => {});
  }

  /** Closes everything (the turn's tools are done); never throws. */
  async closeAll(): Promise<void> {
    const all = [...this.items.keys()];
    await Promise.all(all.map((k) => this.drop(k)));
  }
}

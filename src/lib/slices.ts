/**
 * Long CPU work in slices: an isolate runs one thing at a time, so a parser,
 * chunker or indexer that runs for seconds makes every request of the same
 * isolate (another organization's included) wait that long. Work loops count
 * their units with a Slicer, which yields to the event loop (a macrotask, so
 * pending requests and I/O run) once a slice has lasted `sliceMs`, or after
 * `maxUnits` units: a deployed Worker's clock only moves on I/O, so the count
 * is what bounds a slice there. A unit is about 10 µs of work (a row, a line,
 * a few KB inflated), so the default slice is ~20 ms either way.
 *
 * Why a timer and not any await: under `wrangler dev` an await on a binding
 * (D1, a Durable Object, R2) is served in the same process without going back
 * to the network, and a chain of them kept new requests out for seconds
 * (measured with `npm run bench:busy`); a timer lets the event loop take them.
 */

export const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export class Slicer {
  private started = Date.now();
  private units = 0;

  constructor(
    private readonly sliceMs = 20,
    private readonly maxUnits = 2_000,
  ) {}

  /** Counts `units` of work; true when the slice is used up (then `await pause()`). Cheap enough per row. */
  due(units = 1): boolean {
    this.units += units;
    return this.units >= this.maxUnits || Date.now() - this.started >= this.sliceMs;
  }

  /** Yields, and starts a new slice. */
  async pause(): Promise<void> {
    await yieldToEventLoop();
    this.units = 0;
    this.started = Date.now();
  }

  /** `due` then `pause` when it is. */
  async tick(units = 1): Promise<void> {
    if (this.due(units)) await this.pause();
  }
}

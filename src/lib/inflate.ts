import { Gunzip, Inflate, Unzlib } from "fflate";

/**
 * Decompression bounded by the bytes it actually produces, never by the sizes
 * a file declares (issue 24, API-DECISIONS "Bounded work"). The compressed
 * input is fed in small slices and every inflated byte is counted against a
 * budget shared by all the parts of one input (all the XML of one XLSX, say):
 * past it, inflating stops at once with an InflateCapError naming the cap.
 * Deflate expands at most ~1,032 times, so a 4 KB slice can never produce more
 * than ~4 MB before the count is checked.
 */

const SLICE_BYTES = 4096;

/** Inflating passed its cap; the message says which cap ("... inflates past 64 MB (the decompression cap ...)"). */
export class InflateCapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InflateCapError";
  }
}

export const megabytes = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MB`;

/** The inflated bytes allowed for one input, and those used so far. */
export class InflateBudget {
  used = 0;
  /** `what` names the input in the error: "The DOCX file", "The sitemap https://…". `cap` names the cap. */
  constructor(
    readonly limit: number,
    readonly what: string,
    readonly cap = "the decompression cap",
  ) {}

  take(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) throw new InflateCapError(`${this.what} inflates past ${megabytes(this.limit)} (${this.cap})`);
  }
}

/**
 * Inflates raw DEFLATE (`deflate-raw`, as in ZIP entries), zlib (PDF streams) or gzip data within
 * `budget`. With `keep: false` the output is only counted (a check before
 * another library inflates the same data); otherwise it is returned.
 * `onSlice` runs after every input slice with the bytes it inflated (a place to yield).
 */
export async function inflateBounded(
  format: "deflate-raw" | "zlib" | "gzip",
  input: Uint8Array,
  budget: InflateBudget,
  opts: { keep?: boolean; onSlice?: (inflated: number) => Promise<void> | void } = {},
): Promise<Uint8Array> {
  const keep = opts.keep !== false;
  const chunks: Uint8Array[] = [];
  let size = 0;
  let sliceBytes = 0;
  const onData = (chunk: Uint8Array) => {
    budget.take(chunk.length);
    sliceBytes += chunk.length;
    if (keep && chunk.length) {
      chunks.push(chunk);
      size += chunk.length;
    }
  };
  const stream = format === "gzip" ? new Gunzip(onData) : format === "zlib" ? new Unzlib(onData) : new Inflate(onData);
  if (!input.length) stream.push(input, true);
  for (let i = 0; i < input.length; i += SLICE_BYTES) {
    sliceBytes = 0;
    stream.push(input.subarray(i, i + SLICE_BYTES), i + SLICE_BYTES >= input.length);
    await opts.onSlice?.(sliceBytes);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

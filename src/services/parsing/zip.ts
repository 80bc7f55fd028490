import { inflateBounded, InflateBudget, InflateCapError } from "../../lib/inflate";
import type { Slicer } from "../../lib/slices";
import { UnparseableDocumentError } from "./types";

/**
 * A ZIP reader for Office files (DOCX, XLSX, PPTX) that inflates only what it
 * is asked for, counting the bytes it actually inflates against the
 * document's cap (the sizes an archive declares are never trusted or used).
 * Entries are found as JSZip (inside mammoth) finds them: the last end of
 * central directory record, its entries in order, each entry's data after its
 * local header; so a check made here covers what mammoth later reads.
 */

/** Inflated bytes per Office document (API-DECISIONS "Bounded work": 64 MB of inflated XML per file). */
export const MAX_INFLATED_OFFICE_BYTES = 64 * 1024 * 1024;

export interface ZipEntry {
  name: string;
  method: number;
  /** Offset of the entry's local header. */
  localOffset: number;
  compressedSize: number;
}

const u16 = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u32 = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;

function notZip(what: string, why: string): UnparseableDocumentError {
  return new UnparseableDocumentError(`The file is not a readable ${what} document (${why})`);
}

/** The central directory's entries (ZIP64 sizes and offsets read from their extra field). */
export function zipEntries(bytes: Uint8Array, what: string): ZipEntry[] {
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65_535); i--) {
    if (u32(bytes, i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw notZip(what, "no ZIP directory");
  let count = u16(bytes, eocd + 10);
  let at = u32(bytes, eocd + 16);
  // ZIP64: the locator just before the record points at the ZIP64 record.
  if ((count === 0xffff || at === 0xffffffff) && eocd >= 20 && u32(bytes, eocd - 20) === 0x07064b50) {
    const z = Number(u32(bytes, eocd - 12)) + u32(bytes, eocd - 8) * 2 ** 32;
    if (z + 56 > bytes.length || u32(bytes, z) !== 0x06064b50) throw notZip(what, "a broken ZIP64 directory");
    count = Number(u32(bytes, z + 32)) + u32(bytes, z + 36) * 2 ** 32;
    at = Number(u32(bytes, z + 48)) + u32(bytes, z + 52) * 2 ** 32;
  }
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || u32(bytes, at) !== 0x02014b50) throw notZip(what, "a broken ZIP directory");
    const nameLength = u16(bytes, at + 28);
    const extraLength = u16(bytes, at + 30);
    const commentLength = u16(bytes, at + 32);
    const entry: ZipEntry = {
      name: new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + nameLength)),
      method: u16(bytes, at + 10),
      compressedSize: u32(bytes, at + 20),
      localOffset: u32(bytes, at + 42),
    };
    zip64Fields(bytes.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), entry, u32(bytes, at + 24));
    entries.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** ZIP64 extended information (header 0x0001): the 64-bit values of the fields that are 0xFFFFFFFF, in order. */
function zip64Fields(extra: Uint8Array, entry: ZipEntry, uncompressed: number) {
  for (let i = 0; i + 4 <= extra.length; ) {
    const id = u16(extra, i);
    const size = u16(extra, i + 2);
    if (id === 0x0001) {
      let p = i + 4;
      const next = () => {
        const v = Number(u32(extra, p)) + u32(extra, p + 4) * 2 ** 32;
        p += 8;
        return v;
      };
      if (uncompressed === 0xffffffff) next();
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next();
      if (entry.localOffset === 0xffffffff) entry.localOffset = next();
      return;
    }
    i += 4 + size;
  }
}

/** The entry's compressed bytes (after its local header). */
function entryData(bytes: Uint8Array, e: ZipEntry, what: string): Uint8Array {
  const at = e.localOffset;
  if (at + 30 > bytes.length || u32(bytes, at) !== 0x04034b50) throw notZip(what, `a broken entry ${e.name}`);
  const start = at + 30 + u16(bytes, at + 26) + u16(bytes, at + 28);
  if (start + e.compressedSize > bytes.length) throw notZip(what, `a truncated entry ${e.name}`);
  return bytes.subarray(start, start + e.compressedSize);
}

/**
 * An Office file's archive: entries inflated on request, all of them counted
 * against one budget (MAX_INFLATED_OFFICE_BYTES by default); past it the
 * document fails with a reason naming the cap.
 */
export class OfficeZip {
  readonly entries: Map<string, ZipEntry>;
  private readonly budget: InflateBudget;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
    private readonly slicer?: Slicer,
    limit = MAX_INFLATED_OFFICE_BYTES,
  ) {
    this.entries = new Map(zipEntries(bytes, what).map((e) => [e.name, e]));
    this.budget = new InflateBudget(limit, `The ${what} file`, "the cap on inflated XML per document");
  }

  /** The entry's bytes, or undefined when there is no such entry. */
  async read(name: string): Promise<Uint8Array | undefined> {
    const e = this.entries.get(name);
    return e ? this.inflate(e, true) : undefined;
  }

  async text(name: string): Promise<string> {
    const b = await this.read(name);
    return b ? new TextDecoder().decode(b) : "";
  }

  /** Inflates every entry without keeping anything: throws when the archive inflates past the cap. */
  async checkAll(): Promise<void> {
    for (const e of this.entries.values()) await this.inflate(e, false);
  }

  private async inflate(e: ZipEntry, keep: boolean): Promise<Uint8Array> {
    const data = entryData(this.bytes, e, this.what);
    if (e.method === 0) {
      this.budget.take(data.length);
      return data;
    }
    if (e.method !== 8) throw notZip(this.what, `entry ${e.name} uses compression method ${e.method}`);
    try {
      return await inflateBounded("deflate-raw", data, this.budget, { keep, onSlice: this.slicer ? (n) => this.slicer!.tick(1 + (n >> 11)) : undefined });
    } catch (err) {
      if (err instanceof InflateCapError) throw new UnparseableDocumentError(err.message);
      throw notZip(this.what, `entry ${e.name}: ${(err as Error).message.slice(0, 200)}`);
    }
  }
}

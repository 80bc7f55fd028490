import { inflateBounded, InflateBudget, InflateCapError } from "../../lib/inflate";
import { Slicer } from "../../lib/slices";
import { UnparseableDocumentError } from "./types";

/**
 * PDF.js inflates a PDF's FlateDecode streams (page contents, fonts, object
 * streams) without a limit, so before it reads the file every such stream is
 * inflated here, counting the bytes actually produced against the document's
 * cap, and nothing is kept. Image streams are left out: text extraction never
 * decodes them. A stream that does not inflate (encrypted, damaged) is left to
 * PDF.js to judge.
 */

/** Inflated bytes of a PDF's content, font and object streams. */
export const MAX_INFLATED_PDF_BYTES = 64 * 1024 * 1024;

const STREAM = [...new TextEncoder().encode("stream")];
const ENDSTREAM = new TextEncoder().encode("endstream");
const latin1 = new TextDecoder("latin1");

function indexOf(bytes: Uint8Array, needle: ArrayLike<number>, from: number): number {
  const first = needle[0];
  for (let i = bytes.indexOf(first, from); i !== -1 && i + needle.length <= bytes.length; i = bytes.indexOf(first, i + 1)) {
    let k = 1;
    while (k < needle.length && bytes[i + k] === needle[k]) k++;
    if (k === needle.length) return i;
  }
  return -1;
}

/** The data of each FlateDecode stream that is not an image: [start, end) offsets. */
function* flateStreams(bytes: Uint8Array): Generator<[number, number]> {
  for (let at = indexOf(bytes, STREAM, 0); at !== -1; at = indexOf(bytes, STREAM, at + STREAM.length)) {
    if (at >= 3 && latin1.decode(bytes.subarray(at - 3, at)) === "end") continue;
    let start = at + STREAM.length;
    if (bytes[start] === 0x0d) start++;
    if (bytes[start] !== 0x0a) continue;
    start++;
    const head = latin1.decode(bytes.subarray(Math.max(0, at - 2048), at));
    const dict = head.slice(head.lastIndexOf("obj") + 1);
    if (!/\/FlateDecode\b/.test(dict) || /\/Subtype\s*\/Image\b/.test(dict)) continue;
    const declared = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict);
    let end = declared ? start + Number(declared[1]) : indexOf(bytes, ENDSTREAM, start);
    if (end === -1 || end > bytes.length) end = bytes.length;
    yield [start, end];
    at = Math.max(at, end - STREAM.length);
  }
}

/** Throws UnparseableDocumentError naming the cap when the PDF's streams inflate past it. */
export async function checkPdfStreams(bytes: Uint8Array, limit = MAX_INFLATED_PDF_BYTES): Promise<void> {
  const budget = new InflateBudget(limit, "The PDF file", "the cap on inflated streams per document");
  const slicer = new Slicer();
  for (const [start, end] of flateStreams(bytes)) {
    try {
      await inflateBounded("zlib", bytes.subarray(start, end), budget, { keep: false, onSlice: (n) => slicer.tick(1 + (n >> 11)) });
    } catch (e) {
      if (e instanceof InflateCapError) throw new UnparseableDocumentError(e.message);
      // Not inflatable here: PDF.js decides what it makes of it.
    }
    await slicer.tick();
  }
}

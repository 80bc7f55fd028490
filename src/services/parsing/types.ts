/** A structural piece of a document: the text under one heading, or one page. */
export interface ParsedSection {
  /** Heading path, outermost first ("Guide > Installation"); empty when none. */
  headings: string[];
  /** 1-based page (PDF) or slide (PPTX) number. */
  page?: number;
  text: string;
}

export interface ParsedDocument {
  sections: ParsedSection[];
  /** Pages of a PDF, slides of a PPTX, sheets of an XLSX. */
  pageCount?: number;
  /** A title found in the content (HTML <title>, first heading), if any. */
  title?: string;
  /** The extracted text as Markdown: stored as the derived text document of binary files. */
  markdown: string;
}

/**
 * A file that cannot be turned into text: processing fails at once (no
 * retries) with this message, which is shown to the user as the document's
 * `error`, so it must say what is wrong in their terms.
 */
export class UnparseableDocumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnparseableDocumentError";
  }
}

/** Decodes text, honouring a UTF-8/UTF-16 byte-order mark, and refuses binary garbage. */
export function decodeText(bytes: Uint8Array, what = "file"): string {
  let text: string;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) text = new TextDecoder("utf-16le").decode(bytes.subarray(2));
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) text = new TextDecoder("utf-16be").decode(bytes.subarray(2));
  else text = new TextDecoder("utf-8").decode(bytes);
  const sample = text.slice(0, 4096);
  // eslint-disable-next-line no-control-regex
  const control = (sample.match(/[\u0000-\u0008\u000e-\u001f]/g) ?? []).length;
  if (sample.length > 0 && control / sample.length > 0.05) {
    throw new UnparseableDocumentError(`The ${what} does not look like text (it contains binary data)`);
  }
  return text.replace(/^\ufeff/, "").replace(/\r\n?/g, "\n");
}

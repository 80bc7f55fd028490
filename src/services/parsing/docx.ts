import mammoth from "mammoth";
import { fragmentToMarkdown } from "./html";
import { markdownSections } from "./markdown";
import { UnparseableDocumentError, type ParsedDocument } from "./types";

/**
 * DOCX through mammoth (Word styles Heading 1..6 become h1..h6), then the HTML
 * to Markdown, so headings become the sections' heading paths. The bundled
 * (browser) build of mammoth reads `arrayBuffer`, the Node build (vitest)
 * reads `buffer`: both are passed.
 */
export async function parseDocx(bytes: Uint8Array): Promise<ParsedDocument> {
  const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let html: string;
  try {
    const result = await mammoth.convertToHtml({ arrayBuffer, buffer: Buffer.from(arrayBuffer) } as unknown as { arrayBuffer: ArrayBuffer });
    html = result.value;
  } catch (e) {
    throw new UnparseableDocumentError(`The file is not a readable DOCX document (${(e as Error).message.slice(0, 200)})`);
  }
  const markdown = fragmentToMarkdown(html);
  const { sections, title } = markdownSections(markdown);
  return { sections, title, markdown };
}

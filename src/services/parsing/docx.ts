import mammoth from "mammoth";
import { Slicer } from "../../lib/slices";
import { fragmentToMarkdown } from "./html";
import { markdownSections } from "./markdown";
import { UnparseableDocumentError, type ParsedDocument } from "./types";
import { OfficeZip } from "./zip";

/** Images are never read (their bytes would be inflated for nothing): an image becomes an empty <img>. */
const SKIP_IMAGES = mammoth.images.imgElement(async () => ({ src: "" }));

/**
 * DOCX through mammoth (Word styles Heading 1..6 become h1..h6), then the HTML
 * to Markdown, so headings become the sections' heading paths. mammoth
 * inflates the archive itself, without a limit: every entry is first inflated
 * here, in slices, counting the bytes actually produced against the
 * document's cap (zip.ts), so a zip bomb fails before mammoth sees it. The
 * bundled (browser) build of mammoth reads `arrayBuffer`, the Node build
 * (vitest) reads `buffer`: both are passed.
 */
export async function parseDocx(bytes: Uint8Array): Promise<ParsedDocument> {
  const slicer = new Slicer();
  await new OfficeZip(bytes, "DOCX", slicer).checkAll();
  const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let html: string;
  try {
    const input = { arrayBuffer, buffer: Buffer.from(arrayBuffer) } as unknown as { arrayBuffer: ArrayBuffer };
    const result = await mammoth.convertToHtml(input, { convertImage: SKIP_IMAGES });
    html = result.value;
  } catch (e) {
    throw new UnparseableDocumentError(`The file is not a readable DOCX document (${(e as Error).message.slice(0, 200)})`);
  }
  await slicer.pause();
  const markdown = fragmentToMarkdown(html);
  await slicer.pause();
  const { sections, title } = await markdownSections(markdown, slicer);
  return { sections, title, markdown };
}

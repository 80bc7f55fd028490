import type { DocumentKind } from "../documents/types";
import { markdownSections } from "./markdown";
import { jsonSections, parseCsv, tableSections } from "./tabular";
import { decodeText, UnparseableDocumentError, type ParsedDocument } from "./types";

export { UnparseableDocumentError } from "./types";
export type { ParsedDocument, ParsedSection } from "./types";

/**
 * Turns a stored file into sections (text with heading path and page). Every
 * failure that retrying cannot fix is an UnparseableDocumentError with a
 * message for the user. The heavy parsers (PDF.js, mammoth, linkedom) are
 * loaded on first use, so requests that never parse do not pay for them.
 */
export async function parseDocument(kind: DocumentKind, bytes: Uint8Array): Promise<ParsedDocument> {
  if (bytes.byteLength === 0) throw new UnparseableDocumentError("The file is empty");
  let parsed: ParsedDocument;
  switch (kind) {
    case "pdf":
      parsed = await (await import("./pdf")).parsePdf(bytes);
      break;
    case "docx":
      parsed = await (await import("./docx")).parseDocx(bytes);
      break;
    case "xlsx":
      parsed = await (await import("./xlsx")).parseXlsx(bytes);
      break;
    case "pptx":
      parsed = await (await import("./ooxml")).parsePptx(bytes);
      break;
    case "html": {
      const { htmlToMarkdown } = await import("./html");
      const { title, markdown } = htmlToMarkdown(decodeText(bytes, "HTML file"));
      const md = await markdownSections(markdown);
      parsed = { sections: md.sections, title: title ?? md.title, markdown };
      break;
    }
    case "markdown": {
      const markdown = decodeText(bytes, "Markdown file");
      const md = await markdownSections(markdown);
      parsed = { sections: md.sections, title: md.title, markdown };
      break;
    }
    case "text": {
      const text = decodeText(bytes, "text file");
      parsed = { sections: [{ headings: [], text }], markdown: text };
      break;
    }
    case "csv": {
      const text = decodeText(bytes, "CSV file");
      parsed = { sections: await tableSections(await parseCsv(text)), markdown: text };
      break;
    }
    case "json": {
      const text = decodeText(bytes, "JSON file");
      parsed = { sections: await jsonSections(text), markdown: text };
      break;
    }
  }
  if (!parsed.sections.some((s) => s.text.trim())) {
    throw new UnparseableDocumentError("The file contains no text to index");
  }
  return parsed;
}

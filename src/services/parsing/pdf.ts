import { getDocumentProxy } from "unpdf";
import { yieldToEventLoop } from "../../lib/slices";
import { checkPdfStreams } from "./pdf-streams";
import { UnparseableDocumentError, type ParsedDocument, type ParsedSection } from "./types";

interface Line {
  text: string;
  size: number;
  y: number;
}

/** Lines of one page from positioned text items (PDF y grows upwards). */
function pageLines(items: { str: string; y: number; fontSize: number; hasEOL: boolean }[]): Line[] {
  const lines: Line[] = [];
  let cur: Line | null = null;
  for (const it of items) {
    if (cur && Math.abs(it.y - cur.y) > Math.max(2, cur.size * 0.5) && cur.text.trim()) {
      lines.push(cur);
      cur = null;
    }
    if (!cur) cur = { text: "", size: 0, y: it.y };
    cur.text += it.str;
    if (it.str.trim()) cur.size = Math.max(cur.size, it.fontSize);
    if (it.hasEOL) {
      if (cur.text.trim()) lines.push(cur);
      cur = null;
    }
  }
  if (cur?.text.trim()) lines.push(cur);
  return lines.map((l) => ({ ...l, text: l.text.replace(/\s+/g, " ").trim() }));
}

/** The most common font size by characters: the body text size. */
function bodySize(lines: Line[]): number {
  const bySize = new Map<number, number>();
  for (const l of lines) bySize.set(Math.round(l.size * 2) / 2, (bySize.get(Math.round(l.size * 2) / 2) ?? 0) + l.text.length);
  let best = 0;
  let bestCount = -1;
  for (const [size, n] of bySize) if (n > bestCount) [best, bestCount] = [size, n];
  return best;
}

const isHeadingLine = (l: Line, body: number) =>
  body > 0 && l.size >= body * 1.15 && l.text.length <= 120 && /\p{L}/u.test(l.text) && !/[.,;:]$/.test(l.text);

type TextItem = { str: string; y: number; fontSize: number; hasEOL: boolean };
type PdfItems = { totalPages: number; items: TextItem[][] };

/** Positioned text of every page, one page at a time with a yield after each (a long PDF does not hold the isolate). */
async function textItemsOf(bytes: Uint8Array): Promise<PdfItems> {
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    try {
      const items: TextItem[][] = [];
      for (let n = 1; n <= pdf.numPages; n++) {
        const content = await (await pdf.getPage(n)).getTextContent();
        items.push(
          content.items
            .filter((it): it is typeof it & { str: string; transform: number[]; hasEOL: boolean } => "str" in it && it.str != null)
            .map((it) => ({ str: it.str, y: it.transform[5], fontSize: Math.hypot(it.transform[2], it.transform[3]), hasEOL: it.hasEOL })),
        );
        await yieldToEventLoop();
      }
      return { totalPages: pdf.numPages, items };
    } finally {
      await pdf.loadingTask.destroy();
    }
  } catch (e) {
    const msg = (e as Error)?.message ?? String(e);
    if (/password/i.test(msg) || (e as Error)?.name === "PasswordException") {
      throw new UnparseableDocumentError("The PDF is password-protected; upload a copy without a password");
    }
    throw new UnparseableDocumentError(`The file is not a readable PDF (${msg.slice(0, 200)})`);
  }
}

/** The pages' lines as sections under their heading path, and the Markdown of the whole. */
class Outline {
  readonly sections: ParsedSection[] = [];
  readonly md: string[] = [];
  title: string | undefined;
  private readonly stack: { level: number; text: string }[] = [];

  constructor(
    private readonly body: number,
    private readonly headingSizes: number[],
  ) {}

  addPage(lines: Line[], page: number) {
    this.md.push(`\n\n[Page ${page}]\n`);
    let paragraphs: string[] = [];
    let para = "";
    let lastY: number | null = null;
    let lastSize = this.body;
    const endParagraph = () => {
      if (para.trim()) paragraphs.push(para.trim());
      para = "";
    };
    const flush = () => {
      endParagraph();
      this.addSection(paragraphs.join("\n\n"), page);
      paragraphs = [];
    };
    for (const line of lines) {
      if (isHeadingLine(line, this.body)) {
        flush();
        this.addHeading(line);
        lastY = line.y;
        continue;
      }
      // A vertical gap larger than ~1.6 lines starts a new paragraph.
      if (lastY !== null && Math.abs(lastY - line.y) > Math.max(lastSize, line.size) * 1.6) endParagraph();
      para = para.endsWith("-") && /^\p{Ll}/u.test(line.text) ? para.slice(0, -1) + line.text : para ? `${para} ${line.text}` : line.text;
      lastY = line.y;
      lastSize = line.size || this.body;
    }
    flush();
  }

  private addSection(text: string, page: number) {
    if (!text) return;
    this.sections.push({ headings: this.stack.map((h) => h.text), page, text });
    this.md.push(text);
  }

  private addHeading(line: Line) {
    const level = this.headingSizes.indexOf(Math.round(line.size)) + 1 || 1;
    while (this.stack.length && this.stack[this.stack.length - 1].level >= level) this.stack.pop();
    this.stack.push({ level, text: line.text });
    this.title ??= line.text;
    this.md.push(`${"#".repeat(Math.min(level, 6))} ${line.text}`);
  }
}

/**
 * PDF via unpdf (PDF.js): one section per page and heading, page numbers kept.
 * Its compressed streams are first checked against the inflation cap (pdf-streams.ts).
 * Lines set noticeably larger than the body text are taken as headings (PDF
 * has no structure; font size is the best signal it carries).
 */
export async function parsePdf(bytes: Uint8Array): Promise<ParsedDocument> {
  await checkPdfStreams(bytes);
  const pages = await textItemsOf(bytes);
  const perPage = pages.items.map(pageLines);
  const body = bodySize(perPage.flat());
  const headingSizes = [...new Set(perPage.flat().filter((l) => isHeadingLine(l, body)).map((l) => Math.round(l.size)))].sort((a, b) => b - a);
  const outline = new Outline(body, headingSizes);
  perPage.forEach((lines, i) => outline.addPage(lines, i + 1));

  if (!outline.sections.some((s) => s.text.trim())) {
    throw new UnparseableDocumentError(
      "The PDF has no extractable text (it is probably scanned images); text recognition (OCR) is not supported, so upload a PDF with a text layer",
    );
  }
  const markdown = outline.md.join("\n\n").replace(/\n{3,}/g, "\n\n").trim();
  return { sections: outline.sections, pageCount: pages.totalPages, title: outline.title, markdown };
}

import { extractTextItems, getDocumentProxy } from "unpdf";
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

/**
 * PDF via unpdf (PDF.js): one section per page and heading, page numbers kept.
 * Lines set noticeably larger than the body text are taken as headings (PDF
 * has no structure; font size is the best signal it carries).
 */
export async function parsePdf(bytes: Uint8Array): Promise<ParsedDocument> {
  let pages: { totalPages: number; items: Awaited<ReturnType<typeof extractTextItems>>["items"] };
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    pages = await extractTextItems(pdf);
  } catch (e) {
    const msg = (e as Error)?.message ?? String(e);
    if (/password/i.test(msg) || (e as Error)?.name === "PasswordException") {
      throw new UnparseableDocumentError("The PDF is password-protected; upload a copy without a password");
    }
    throw new UnparseableDocumentError(`The file is not a readable PDF (${msg.slice(0, 200)})`);
  }

  const perPage = pages.items.map(pageLines);
  const body = bodySize(perPage.flat());
  const headingSizes = [...new Set(perPage.flat().filter((l) => isHeadingLine(l, body)).map((l) => Math.round(l.size)))].sort((a, b) => b - a);

  const sections: ParsedSection[] = [];
  const md: string[] = [];
  const stack: { level: number; text: string }[] = [];
  let title: string | undefined;
  perPage.forEach((lines, i) => {
    const page = i + 1;
    md.push(`\n\n[Page ${page}]\n`);
    let paragraphs: string[] = [];
    let para = "";
    let lastY: number | null = null;
    let lastSize = body;
    const endParagraph = () => {
      if (para.trim()) paragraphs.push(para.trim());
      para = "";
    };
    const flush = () => {
      endParagraph();
      const text = paragraphs.join("\n\n");
      if (text) {
        sections.push({ headings: stack.map((h) => h.text), page, text });
        md.push(text);
      }
      paragraphs = [];
    };
    for (const line of lines) {
      if (isHeadingLine(line, body)) {
        flush();
        const level = headingSizes.indexOf(Math.round(line.size)) + 1 || 1;
        while (stack.length && stack[stack.length - 1].level >= level) stack.pop();
        stack.push({ level, text: line.text });
        title ??= line.text;
        md.push(`${"#".repeat(Math.min(level, 6))} ${line.text}`);
        lastY = line.y;
        continue;
      }
      // A vertical gap larger than ~1.6 lines starts a new paragraph.
      if (lastY !== null && Math.abs(lastY - line.y) > Math.max(lastSize, line.size) * 1.6) endParagraph();
      para = para.endsWith("-") && /^\p{Ll}/u.test(line.text) ? para.slice(0, -1) + line.text : para ? `${para} ${line.text}` : line.text;
      lastY = line.y;
      lastSize = line.size || body;
    }
    flush();
  });

  if (!sections.some((s) => s.text.trim())) {
    throw new UnparseableDocumentError(
      "The PDF has no extractable text (it is probably scanned images); text recognition (OCR) is not supported, so upload a PDF with a text layer",
    );
  }
  return { sections, pageCount: pages.totalPages, title, markdown: md.join("\n\n").replace(/\n{3,}/g, "\n\n").trim() };
}

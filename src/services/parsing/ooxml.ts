import { Slicer } from "../../lib/slices";
import { UnparseableDocumentError, type ParsedDocument, type ParsedSection } from "./types";
import { OfficeZip } from "./zip";

/** Shared by the Office formats (XLSX in xlsx.ts, PPTX here): entities, attributes, text runs, relationships. */

export function decodeXmlEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|lt|gt|amp|quot|apos);/gi, (_, e: string) => {
    const lower = e.toLowerCase();
    if (lower[0] === "#") {
      const code = lower[1] === "x" ? parseInt(lower.slice(2), 16) : parseInt(lower.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    return { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" }[lower] ?? "";
  });
}

export const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];

/** Text of all <t> / <a:t> runs in an XML fragment. */
export function runsText(xml: string, tag: "t" | "a:t"): string {
  const re = tag === "t" ? /<t(?:\s[^>]*)?>([\s\S]*?)<\/t>/g : /<a:t(?:\s[^>]*)?>([\s\S]*?)<\/a:t>/g;
  let out = "";
  for (const m of xml.matchAll(re)) out += decodeXmlEntities(m[1]);
  return out;
}

/** Relationship id -> target path (resolved against `baseDir`). */
export function relationships(xml: string, baseDir: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const m of xml.matchAll(/<Relationship\b[^>]*>/g)) {
    const id = attr(m[0], "Id");
    const target = attr(m[0], "Target");
    if (id && target) map.set(id, target.startsWith("/") ? target.slice(1) : baseDir + target);
  }
  return map;
}

/** PPTX: one section per slide (page = slide number), headed by the slide's title. */
export async function parsePptx(bytes: Uint8Array): Promise<ParsedDocument> {
  const slicer = new Slicer();
  const zip = new OfficeZip(bytes, "PPTX", slicer);
  const presentation = await zip.text("ppt/presentation.xml");
  if (!presentation) throw new UnparseableDocumentError("The file is not a readable PPTX document (no presentation)");
  const rels = relationships(await zip.text("ppt/_rels/presentation.xml.rels"), "ppt/");
  const isSlide = (p: string) => /^ppt\/slides\/slide\d+\.xml$/.test(p) && zip.entries.has(p);
  // Each slide once, even if the presentation lists it twice.
  let order = [...new Set([...presentation.matchAll(/<p:sldId\b[^>]*>/g)].map((m) => rels.get(attr(m[0], "r:id") ?? "") ?? ""))].filter(isSlide);
  if (!order.length) {
    order = [...zip.entries.keys()]
      .filter(isSlide)
      .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)![1]) - Number(/(\d+)\.xml$/.exec(b)![1]));
  }
  const sections: ParsedSection[] = [];
  const md: string[] = [];
  for (const [i, path] of order.entries()) {
    const xml = await zip.text(path);
    const slide = i + 1;
    let title: string | undefined;
    const paragraphs: string[] = [];
    for (const sp of xml.matchAll(/<p:sp\b[\s\S]*?<\/p:sp>/g)) {
      const isTitle = /<p:ph\b[^>]*type="(title|ctrTitle)"/.test(sp[0]);
      const texts = [...sp[0].matchAll(/<a:p\b[\s\S]*?<\/a:p>/g)].map((p) => runsText(p[0], "a:t").trim()).filter(Boolean);
      if (isTitle && !title && texts.length) title = texts.join(" ");
      else paragraphs.push(...texts);
      await slicer.tick(1 + texts.length);
    }
    const heading = title ? `Slide ${slide}: ${title}` : `Slide ${slide}`;
    const text = paragraphs.join("\n");
    if (text || title) sections.push({ headings: [heading], page: slide, text: text || title! });
    md.push(`## ${heading}\n\n${text}`);
  }
  if (!sections.length) throw new UnparseableDocumentError("The presentation has no slides with text");
  return { sections, pageCount: order.length, markdown: md.join("\n\n") };
}

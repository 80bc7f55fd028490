import { Slicer } from "../../lib/slices";
import type { ParsedSection } from "./types";

/**
 * Splits Markdown into sections by ATX (`## Title`) and setext headings,
 * keeping the heading path; headings inside fenced code blocks are text.
 * Long documents are read in slices that yield (lib/slices.ts).
 */
export async function markdownSections(markdown: string, slicer = new Slicer()): Promise<{ sections: ParsedSection[]; title?: string }> {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const sections: ParsedSection[] = [];
  const stack: { level: number; text: string }[] = [];
  let buf: string[] = [];
  let fence: string | null = null;
  let title: string | undefined;

  const flush = () => {
    const text = buf.join("\n").trim();
    if (text) sections.push({ headings: stack.map((h) => h.text), text });
    buf = [];
  };
  const open = (level: number, text: string) => {
    flush();
    const clean = text.replace(/\s+#+\s*$/, "").replace(/[*_`]/g, "").trim();
    if (!clean) return;
    while (stack.length && stack[stack.length - 1].level >= level) stack.pop();
    stack.push({ level, text: clean });
    if (!title && level === 1) title = clean;
  };

  for (let i = 0; i < lines.length; i++) {
    if (slicer.due()) await slicer.pause();
    const line = lines[i];
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      if (!fence) fence = fenceMatch[1][0];
      else if (fenceMatch[1][0] === fence) fence = null;
      buf.push(line);
      continue;
    }
    if (fence) {
      buf.push(line);
      continue;
    }
    const atx = /^\s{0,3}(#{1,6})\s+(.*)$/.exec(line);
    if (atx) {
      open(atx[1].length, atx[2]);
      continue;
    }
    const next = lines[i + 1];
    const prevBlank = !buf.length || !buf[buf.length - 1].trim();
    if (line.trim() && prevBlank && next !== undefined && /^\s{0,3}(=+|-+)\s*$/.test(next) && !/^\s*([-*+]|\d+[.)])\s/.test(line)) {
      // Setext heading: a one-line paragraph underlined by === (level 1) or --- (level 2).
      open(next.trim()[0] === "=" ? 1 : 2, line);
      i++;
      continue;
    }
    buf.push(line);
  }
  flush();
  return { sections, title };
}

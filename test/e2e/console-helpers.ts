import { mkdirSync } from "node:fs";
import path from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { root } from "../bench/lib.ts";

/** Screenshots of the console's pages (not committed: test/.tmp is git-ignored). */
export const SHOTS = path.join(root, "test/.tmp/console");
mkdirSync(SHOTS, { recursive: true });

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export async function shoot(page: Page, name: string): Promise<string> {
  const vp = page.viewportSize();
  const file = path.join(SHOTS, `${name}-${vp?.width}x${vp?.height}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * The README's pictures: with CONSOLE_DOCS_DIR set (`src/console/docs`), these pages are also photographed
 * as the window shows them at 1280×800 (then `pngquant` makes them small).
 */
const README_SHOTS = new Set(["documents", "playground-answer", "playground-chart", "memory-graph"]);

export async function readmeShot(page: Page, name: string) {
  const dir = process.env.CONSOLE_DOCS_DIR;
  if (!dir || !README_SHOTS.has(name) || page.viewportSize()?.width !== DESKTOP.width) return;
  mkdirSync(path.resolve(root, dir), { recursive: true });
  await page.screenshot({ path: path.resolve(root, dir, `${name}.png`) });
}

/** axe-core (WCAG 2 A/AA, 2.1 AA) on the page as it is: the serious and critical violations, in words. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const r = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return r.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
}

/** Drops files on an element the way a browser does (a DataTransfer in a drop event). */
export async function dropFiles(page: Page, selector: string, files: { name: string; type: string; text: string }[]) {
  // Run inside the page (a string, so this Node test needs no DOM types).
  const dt = await page.evaluateHandle(
    `(() => { const t = new DataTransfer(); for (const f of ${JSON.stringify(files)}) t.items.add(new File([f.text], f.name, { type: f.type })); return t; })()`,
  );
  await page.dispatchEvent(selector, "dragover", { dataTransfer: dt });
  await page.dispatchEvent(selector, "drop", { dataTransfer: dt });
}

/**
 * The page as it is, at phone width: nothing wider than the screen (the elements that stick out are named, to
 * make a failure easy to fix), no serious axe violation, and its screenshot.
 */
export async function checkPhonePage(page: Page, name: string) {
  const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
  if (overflow > 1) {
    const wide = await page.evaluate(
      "[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1).slice(0, 8)" +
        ".map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))",
    );
    console.log(`${name} sticks out:`, wide);
  }
  expect(overflow, `${name} is wider than the phone`).toBeLessThanOrEqual(1);
  expect(await seriousViolations(page), `axe on ${name} (phone)`).toEqual([]);
  await shoot(page, name);
}

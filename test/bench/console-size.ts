/**
 * `npm run bench:console`: the JavaScript (and CSS) the console's first page loads, raw and gzip, from the
 * built index.html (dist/assets/console; the script builds it first). Pages loaded on demand (the playground)
 * are listed apart. Fails when the first page's JavaScript is over its budget (250 KB gzip).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { root } from "./lib.ts";

const BUDGET_GZIP = 250 * 1024;
const dir = path.join(root, "dist/assets/console");
const html = readFileSync(path.join(dir, "index.html"), "utf8");
const first = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
const size = (file: string) => {
  const bytes = readFileSync(path.join(dir, file));
  return { raw: bytes.byteLength, gzip: gzipSync(bytes, { level: 9 }).byteLength };
};
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
let js = 0;
let jsRaw = 0;
for (const file of first) {
  const s = size(file);
  if (file.endsWith(".js")) (js += s.gzip), (jsRaw += s.raw);
  console.log(`first page  ${file.padEnd(40)} ${kb(s.raw).padStart(10)} raw ${kb(s.gzip).padStart(10)} gzip`);
}
for (const file of readdirSync(path.join(dir, "assets")).map((f) => `assets/${f}`).filter((f) => !first.includes(f))) {
  const s = size(file);
  console.log(`on demand   ${file.padEnd(40)} ${kb(s.raw).padStart(10)} raw ${kb(s.gzip).padStart(10)} gzip`);
}
console.log(`console first-page JavaScript: ${kb(jsRaw)} raw, ${kb(js)} gzip (budget ${kb(BUDGET_GZIP)} gzip)`);
if (js > BUDGET_GZIP) {
  console.error("over budget");
  process.exit(1);
}

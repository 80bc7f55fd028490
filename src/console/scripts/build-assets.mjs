// `npm run build:assets`: the Worker's static assets (wrangler.toml [assets]): the console, built by Vite into
// dist/assets/console/, the Swagger UI files copied into dist/assets/swagger/, and the chat widget bundled by
// esbuild into dist/assets/widget.js (src/widget/build.mjs). wrangler dev runs this on
// every start and every edit under src/, and several `wrangler dev` may start at once (the browser tests):
// when the build is newer than every console source it is kept as it is, so nothing is deleted under a
// running server. `--force` builds anyway.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { buildWidget, WIDGET_OUT } from "../../widget/build.mjs";

const root = path.join(import.meta.dirname, "../../..");
// (The console also bundles the chat's chart builder, src/services/tables/chart.ts: the same spec in both.)
const sources = [path.join(root, "src/console"), path.join(root, "src/services/tables/chart.ts"), path.join(root, "package-lock.json"), import.meta.filename];
const built = path.join(root, "dist/assets/console/index.html");
const swagger = path.join(root, "dist/assets/swagger/swagger-ui-bundle.js");

function newest(p) {
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(p).map((f) => newest(path.join(p, f))));
}

// The widget is small and has its own sources: bundled whenever they are newer than the bundle.
const widgetSources = path.join(root, "src/widget");
if (process.argv.includes("--force") || !existsSync(WIDGET_OUT) || statSync(WIDGET_OUT).mtimeMs <= newest(widgetSources)) await buildWidget();

const upToDate = existsSync(built) && existsSync(swagger) && statSync(built).mtimeMs > Math.max(...sources.map(newest));
if (upToDate && !process.argv.includes("--force")) process.exit(0);

// A production build whatever NODE_ENV the caller has (wrangler dev sets development, which would bundle
// React's development build).
const vite = spawnSync("npx", ["vite", "build", "--config", "src/console/vite.config.ts", "--logLevel", "warn"], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, NODE_ENV: "production" },
});
if (vite.status !== 0) process.exit(vite.status ?? 1);
const copy = spawnSync(process.execPath, [path.join(root, "src/console/scripts/copy-swagger.mjs")], { cwd: root, stdio: "inherit" });
process.exit(copy.status ?? 1);

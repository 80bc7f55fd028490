// The widget's bundle (src/widget/main.ts → dist/assets/widget.js), run by `npm run build:assets`: one
// classic script (an IIFE: pages load it with a plain <script> tag), ES2019 for older browsers, whitespace
// removed but names kept, so a customer's error report still names the widget's functions.
import path from "node:path";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "../..");

export const WIDGET_OUT = path.join(root, "dist/assets/widget.js");

export async function buildWidget() {
  await build({
    entryPoints: [path.join(root, "src/widget/main.ts")],
    outfile: WIDGET_OUT,
    bundle: true,
    format: "iife",
    target: "es2019",
    platform: "browser",
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: "none",
    banner: { js: "/*! kb-chat-widget: a chat launcher and panel for this knowledge-base service. No third-party code. */" },
    logLevel: "warning",
  });
}

if (import.meta.filename === process.argv[1]) await buildWidget();

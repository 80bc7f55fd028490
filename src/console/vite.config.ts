import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/**
 * The console: a single-page app served by the Worker under /console/ from its static assets
 * (dist/assets/console/, next to the Swagger files in dist/assets/swagger/). `wrangler dev` and
 * `wrangler deploy` build it first (wrangler.toml [build]).
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL("../../dist/assets/console", import.meta.url)),
    emptyOutDir: true,
    // The playground (and other large pages) load on demand; the first page stays small.
    // (Vega, ~850 kB, is one lazy chunk that loads only with a chart.)
    chunkSizeWarningLimit: 900,
  },
});

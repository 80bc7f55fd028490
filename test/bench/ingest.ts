/**
 * `npm run bench:ingest`: ingests N generated documents through the public API
 * of a local `wrangler dev` (started here on its own port and state directory,
 * and stopped at the end) and prints documents/s, chunks/s and the p50/p95
 * time from upload to processed.
 *
 *   BENCH_DOCS=50         documents to ingest
 *   BENCH_CONCURRENCY=8   parallel uploads
 *   BENCH_PORT=8791       port for wrangler dev
 *   BENCH_URL=http://...  use an already running server instead (its PUBLIC_BASE_URL must be reachable)
 *
 * Run by Node 22 directly (type stripping); only erasable TypeScript here.
 */
import { rmSync } from "node:fs";
import { type ChildProcess } from "node:child_process";
import { api, pct, scratchDir, setUpKnowledgeBase, sleep, startServer, stopServer, waitForServer } from "./lib.ts";

const N = Number(process.env.BENCH_DOCS ?? 50);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const PORT = Number(process.env.BENCH_PORT ?? 8791);

const TOPICS = ["glaciers", "volcanoes", "coral reefs", "deserts", "rainforests", "tundra", "wetlands", "savannas", "caves", "estuaries"];
const VERBS = ["shape", "support", "threaten", "record", "reveal", "regulate", "feed", "shelter"];

/** A deterministic Markdown document of ~6 KB with six sections. */
function documentText(i: number): string {
  const topic = TOPICS[i % TOPICS.length];
  const sections: string[] = [`# Field notes ${i}: ${topic}`];
  for (let s = 0; s < 6; s++) {
    const sentences: string[] = [];
    for (let k = 0; k < 9; k++) {
      const verb = VERBS[(i + s + k) % VERBS.length];
      sentences.push(`Observation ${i}.${s}.${k}: the ${topic} we surveyed ${verb} local species in ways that change with the seasons and the weather.`);
    }
    sections.push(`## Section ${s + 1}\n\n${sentences.join(" ")}`);
  }
  return sections.join("\n\n");
}

async function main() {
  let server: ChildProcess | null = null;
  let stateDir: string | null = null;
  let base = process.env.BENCH_URL?.replace(/\/+$/, "");
  try {
    if (!base) {
      stateDir = scratchDir("kb-bench-");
      server = startServer(stateDir, PORT);
      base = `http://127.0.0.1:${PORT}`;
      console.log(`starting wrangler dev on ${base} (state in ${stateDir}) ...`);
    }
    await waitForServer(base, 90_000);

    const { cookie, tenantId, kbId } = await setUpKnowledgeBase(base, "bench");
    const kb = { id: kbId };

    const docs = Array.from({ length: N }, (_, i) => new TextEncoder().encode(documentText(i)));
    const uploadedAt = new Map<string, number>();
    const started = Date.now();
    let next = 0;
    async function uploader() {
      while (next < docs.length) {
        const i = next++;
        const p = (
          await api(base!, "/documents/presign", {
            cookie,
            body: { kb_id: kb.id, tenant_id: tenantId, filename: `notes-${i}.md`, mime_type: "text/markdown", size_bytes: docs[i].byteLength },
          })
        ).body;
        const put = await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: docs[i] });
        if (!put.ok) throw new Error(`upload ${i} -> ${put.status}: ${await put.text()}`);
        uploadedAt.set(p.document_id, Date.now());
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, uploader));
    const uploadsDone = Date.now();

    // Poll the list until nothing is pending; processed_at is the server's clock (same machine).
    let final: Array<{ id: string; status: string; chunk_count: number; processed_at: string | null; error: string | null }> = [];
    const deadline = Date.now() + 10 * 60_000;
    while (Date.now() < deadline) {
      final = [];
      for (let offset = 0; offset < N; offset += 200) {
        final.push(...(await api(base, `/documents?kb_id=${kb.id}&limit=200&offset=${offset}`, { cookie })).body.documents);
      }
      if (final.length === N && final.every((d) => d.status === "processed" || d.status === "failed")) break;
      await sleep(200);
    }
    const processed = final.filter((d) => d.status === "processed");
    const failed = final.filter((d) => d.status === "failed");
    const pending = N - processed.length - failed.length;
    const latencies = processed.map((d) => Date.parse(d.processed_at!) - uploadedAt.get(d.id)!);
    const lastProcessed = Math.max(...processed.map((d) => Date.parse(d.processed_at!)));
    const wall = (lastProcessed - started) / 1000;
    const chunks = processed.reduce((s, d) => s + d.chunk_count, 0);
    const avgKb = docs.reduce((s, d) => s + d.byteLength, 0) / docs.length / 1024;
    console.log(
      [
        ``,
        `Ingest benchmark: ${N} Markdown documents (~${avgKb.toFixed(1)} KB each), ${CONCURRENCY} parallel uploads, local wrangler dev`,
        `  uploads (presign + PUT) finished after ${((uploadsDone - started) / 1000).toFixed(2)} s`,
        `  processed: ${processed.length}, failed: ${failed.length}${pending ? `, still pending: ${pending}` : ""}`,
        `  wall time, first upload -> last processed: ${wall.toFixed(2)} s`,
        `  documents/s: ${(processed.length / wall).toFixed(2)}`,
        `  chunks/s: ${(chunks / wall).toFixed(1)} (${chunks} chunks)`,
        `  upload -> processed: p50 ${pct(latencies, 50)} ms, p95 ${pct(latencies, 95)} ms, max ${Math.max(...latencies)} ms`,
        ``,
      ].join("\n"),
    );
    if (failed.length) console.log("first failure:", failed[0].error);
  } finally {
    await stopServer(server);
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

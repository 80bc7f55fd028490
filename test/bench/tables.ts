/**
 * `npm run bench:tables`: loads a generated 100,000-row CSV through the public
 * API of a local `wrangler dev` (started here on its own port and state
 * directory, stopped at the end), then times a grouped aggregate over its
 * table with POST /knowledge-bases/:id/sql, and prints:
 *   - upload -> processed for the CSV (the whole processing: parsing, the
 *     search index of its rows AND the table load), and the table's row count;
 *   - p50 / p95 of the grouped aggregate, over BENCH_QUERIES runs.
 *
 *   BENCH_ROWS=100000     rows of the CSV
 *   BENCH_QUERIES=30      timed runs of the aggregate (after 3 warm-up runs)
 *   BENCH_PORT=8793       port for wrangler dev
 *   BENCH_URL=http://...  use an already running server instead
 *
 * Run by Node 22 directly (type stripping); only erasable TypeScript here.
 */
import { api, pct, setUpKnowledgeBase, sleep, startDevServer } from "./lib.ts";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 30);
const PORT = Number(process.env.BENCH_PORT ?? 8793);

const REGIONS = ["North", "South", "East", "West", "Central"];
const PRODUCTS = ["Anvil", "Bolt", "Cog", "Drill", "Easel", "Fan", "Gear", "Hinge"];

/** A deterministic sales CSV: id, date, region, product, units, unit price, amount. */
function salesCsv(rows: number): string {
  const lines = ["Order ID,Order Date,Region,Product,Units,Unit Price,Amount"];
  for (let i = 0; i < rows; i++) {
    const day = new Date(Date.UTC(2024, 0, 1) + (i % 366) * 86_400_000).toISOString().slice(0, 10);
    const units = 1 + ((i * 7) % 20);
    const price = 5 + ((i * 13) % 200) / 4;
    lines.push(`${100000 + i},${day},${REGIONS[i % REGIONS.length]},${PRODUCTS[(i * 3) % PRODUCTS.length]},${units},${price.toFixed(2)},${(units * price).toFixed(2)}`);
  }
  return lines.join("\n");
}

async function main() {
  const server = await startDevServer({ port: PORT, existing: process.env.BENCH_URL });
  try {
    const { cookie, kb } = await setUpKnowledgeBase(server.base, "tables");
    const csv = new TextEncoder().encode(salesCsv(ROWS));
    const started = Date.now();
    const p = (
      await api(server.base, "/documents/presign", {
        cookie,
        body: { kb_id: kb.id, tenant_id: kb.tenant_id, filename: "sales.csv", mime_type: "text/csv", size_bytes: csv.byteLength },
      })
    ).body;
    const put = await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: csv });
    if (!put.ok) throw new Error(`upload -> ${put.status}: ${await put.text()}`);
    let doc: { status: string; error: string | null; chunk_count: number; processed_at: string | null } | null = null;
    for (let i = 0; i < 6000; i++) {
      doc = (await api(server.base, `/documents/status?document_id=${p.document_id}`, { cookie })).body;
      if (doc!.status === "processed" || doc!.status === "failed") break;
      await sleep(100);
    }
    if (doc?.status !== "processed") throw new Error(`the CSV was not processed: ${doc?.status} ${doc?.error ?? ""}`);
    const loadMs = Date.parse(doc.processed_at!) - started;
    const tables = (await api(server.base, `/knowledge-bases/${kb.id}/tables`, { cookie })).body.tables;

    const query = "SELECT region, product, COUNT(*) AS orders, SUM(units) AS units, ROUND(SUM(amount), 2) AS revenue FROM sales GROUP BY region, product ORDER BY revenue DESC";
    const times: number[] = [];
    let groups = 0;
    for (let i = 0; i < QUERIES + 3; i++) {
      const t = performance.now();
      const r = await api(server.base, `/knowledge-bases/${kb.id}/sql`, { cookie, body: { query } });
      if (i >= 3) times.push(performance.now() - t);
      groups = r.body.row_count;
    }
    console.log(
      [
        ``,
        `Tables benchmark: a ${ROWS.toLocaleString("en")}-row CSV (${(csv.byteLength / 1024 / 1024).toFixed(1)} MB), local wrangler dev`,
        `  upload -> processed (parse, search index of ${doc.chunk_count} chunks, table load): ${(loadMs / 1000).toFixed(2)} s`,
        `  table ${tables[0]?.name}: ${tables[0]?.row_count} rows, columns ${tables[0]?.columns.map((c: { name: string; type: string }) => `${c.name}:${c.type}`).join(", ")}`,
        `  grouped aggregate (${groups} groups) through POST /sql, ${QUERIES} runs: p50 ${pct(times, 50).toFixed(1)} ms, p95 ${pct(times, 95).toFixed(1)} ms`,
        `  query: ${query}`,
        ``,
      ].join("\n"),
    );
  } finally {
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

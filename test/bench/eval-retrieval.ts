/**
 * `npm run eval:retrieval -- --dataset ../shared/eval/scifact`: retrieval
 * quality on a BEIR-format dataset, measured through the real service.
 *
 * A local `wrangler dev` is started (own port and state directory). Each
 * corpus entry becomes one Markdown document (`# title` + text) uploaded
 * through the public API (presign + PUT); the queue consumer parses, chunks,
 * embeds and indexes it as it would any upload. Every test query then runs
 * through the retrieval function the query endpoints use (POST
 * /api/v1/eval/search, present only with EVAL_ENDPOINTS=true: the same
 * searchKnowledgeBase, up to 100 passages, stages switchable for ablations),
 * and the passages' documents, in order, are scored against the qrels:
 * nDCG@10 (trec_eval `ndcg_cut.10`: gain = the qrels grade, ideal DCG from the
 * judged relevant documents), Recall@10, Recall@100, MRR@10, averaged over
 * every query that has judgments. Latency is POST /chats/fast-raw-query over
 * HTTP (chunk_count 10, API key), one query at a time.
 *
 * Options:
 *   --dataset DIR      corpus.jsonl, queries.jsonl, qrels-test.tsv (qrels/test.tsv also accepted)
 *   --state DIR        keep wrangler's state there and reuse an earlier ingestion of the same dataset
 *   --port N           wrangler dev port (default 8792)
 *   --url URL          use a running server instead (it must have EVAL_ENDPOINTS=true); needs --state
 *   --docs N           ingest only the first N corpus entries (smoke runs; scores are then meaningless)
 *   --queries N        evaluate only the first N queries
 *   --no-ablations     only the default configuration and each leg alone
 *   --fusion-grid      also try other fusion constants (RRF k, vector weight)
 *   --json FILE        also write the figures as JSON
 *
 * Embeddings and reranking follow the usual variables, forwarded to wrangler
 * dev from this process's environment (EMBEDDING_*, RERANK_*, RETRIEVAL_*,
 * VECTOR_INDEX, LOCAL_VECTOR_INDEX_MAX_MB, OPENAI_*), e.g. EMBEDDING_PROVIDER=openai
 * EMBEDDING_BASE_URL=http://127.0.0.1:8080/v1 EMBEDDING_MODEL=bge-small-en-v1.5.
 * The dataset stays where it is: it is read, never copied into the repository.
 */
import { type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { score, type Metrics } from "./metrics.ts";
import { api, pct, scratchDir, setUpKnowledgeBase, sleep, startServer, stopServer, waitForServer } from "./lib.ts";

const { values: args } = parseArgs({
  options: {
    dataset: { type: "string" },
    state: { type: "string" },
    port: { type: "string", default: "8792" },
    url: { type: "string" },
    docs: { type: "string" },
    queries: { type: "string" },
    "no-ablations": { type: "boolean", default: false },
    "fusion-grid": { type: "boolean", default: false },
    json: { type: "string" },
    concurrency: { type: "string", default: "8" },
  },
});

interface CorpusEntry {
  _id: string;
  title?: string;
  text: string;
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

function loadDataset(dir: string) {
  const corpus = readJsonl<CorpusEntry>(path.join(dir, "corpus.jsonl"));
  const queries = readJsonl<{ _id: string; text: string }>(path.join(dir, "queries.jsonl"));
  const qrelsFile = [path.join(dir, "qrels-test.tsv"), path.join(dir, "qrels", "test.tsv")].find((f) => existsSync(f));
  if (!qrelsFile) throw new Error(`no qrels-test.tsv (or qrels/test.tsv) in ${dir}`);
  const qrels = new Map<string, Map<string, number>>();
  // BEIR's qrels end lines in CRLF: trim before splitting.
  for (const line of readFileSync(qrelsFile, "utf8").split("\n")) {
    const t = line.trim();
    if (!t) continue;
    const [q, d, s] = t.split("\t");
    if (q === "query-id") continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, Number(s));
  }
  return { corpus, queries: queries.filter((q) => qrels.has(q._id)), qrels };
}

interface State {
  dataset: string;
  docs: number;
  cookie: string;
  key: string;
  kbId: string;
  /** document id -> corpus id */
  documents: Record<string, string>;
  ingestSeconds: number;
  chunks: number;
}

const FORWARDED = /^(EMBEDDING_|RERANK_|RETRIEVAL_|VECTOR_INDEX$|LOCAL_VECTOR_INDEX_MAX_MB$|OPENAI_)/;

async function ingest(base: string, corpus: CorpusEntry[], concurrency: number, datasetKey: string): Promise<State> {
  const { cookie, kbId, tenantId, envId } = await setUpKnowledgeBase(base, "eval");
  const key = (await api(base, `/environments/${envId}/api-keys`, { cookie, body: { name: "eval", scopes: ["query:rag", "documents:read"] } })).body
    .key as string;
  const documents: Record<string, string> = {};
  const encoder = new TextEncoder();
  const started = Date.now();
  let next = 0;
  let uploaded = 0;
  async function uploader() {
    while (next < corpus.length) {
      const entry = corpus[next++];
      const bytes = encoder.encode(`# ${(entry.title ?? "").replace(/\s+/g, " ").trim() || entry._id}\n\n${entry.text}\n`);
      const p = (
        await api(base, "/documents/presign", {
          cookie,
          body: { kb_id: kbId, tenant_id: tenantId, filename: `${entry._id}.md`, mime_type: "text/markdown", size_bytes: bytes.byteLength },
        })
      ).body;
      const put = await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: bytes });
      if (!put.ok) throw new Error(`upload of ${entry._id} -> ${put.status}: ${await put.text()}`);
      documents[p.document_id] = entry._id;
      if (++uploaded % 500 === 0) process.stdout.write(`  uploaded ${uploaded}/${corpus.length}\n`);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, uploader));
  console.log(`  uploads finished after ${((Date.now() - started) / 1000).toFixed(1)} s; waiting for processing ...`);

  let lastReport = 0;
  for (;;) {
    const rows: Array<{ status: string; chunk_count: number; processed_at: string | null; error: string | null }> = [];
    for (let offset = 0; ; offset += 200) {
      const page = (await api(base, `/documents?kb_id=${kbId}&limit=200&offset=${offset}`, { cookie })).body.documents;
      rows.push(...page);
      if (page.length < 200) break;
    }
    const done = rows.filter((d) => d.status === "processed" || d.status === "failed");
    if (Date.now() - lastReport > 15_000) {
      console.log(`  processed ${done.length}/${corpus.length} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
      lastReport = Date.now();
    }
    if (done.length === corpus.length) {
      const failed = rows.filter((d) => d.status === "failed");
      if (failed.length) throw new Error(`${failed.length} documents failed to process; first: ${failed[0].error}`);
      const last = Math.max(...rows.map((d) => Date.parse(d.processed_at!)));
      return {
        dataset: datasetKey,
        docs: corpus.length,
        cookie,
        key,
        kbId,
        documents,
        ingestSeconds: (last - started) / 1000,
        chunks: rows.reduce((s, d) => s + d.chunk_count, 0),
      };
    }
    await sleep(1000);
  }
}

interface Config {
  name: string;
  body: Record<string, unknown>;
}

const CONFIGS: Config[] = [
  { name: "fused (default)", body: {} },
  { name: "lexical leg alone", body: { vector: false } },
  { name: "vector leg alone", body: { lexical: false } },
];
const ABLATIONS: Config[] = [
  { name: "lexical: FTS5 bm25() order only", body: { vector: false, rescore: false, expansion: false, ngrams: false } },
  { name: "lexical: + BM25 per knowledge base", body: { vector: false, expansion: false, ngrams: false } },
  { name: "lexical: + query expansion (RM3)", body: { vector: false, ngrams: false } },
  { name: "lexical: + expansion, no n-grams, fused", body: { ngrams: false } },
  { name: "fused without query expansion", body: { expansion: false } },
  { name: "fused, 100 lexical candidates (default 200)", body: { depth: 100 } },
  { name: "fused, 300 lexical candidates", body: { depth: 300 } },
];

async function runConfig(base: string, state: State, queries: { _id: string; text: string }[], config: Config) {
  const runs = new Map<string, string[]>();
  const took: number[] = [];
  const stages = new Map<string, number[]>();
  let next = 0;
  // Two at a time: the machine running this is small, and the figures are about quality, not throughput.
  async function worker() {
    while (next < queries.length) {
      const q = queries[next++];
      const res = (
        await api(base, "/eval/search", { key: state.key, body: { knowledge_base_id: state.kbId, query: q.text, limit: 150, ...config.body } })
      ).body;
      took.push(res.took_ms);
      for (const [k, v] of Object.entries(res.timings as Record<string, number>)) {
        if (!stages.has(k)) stages.set(k, []);
        stages.get(k)!.push(v);
      }
      const docs: string[] = [];
      for (const p of res.passages as Array<{ document_id: string }>) {
        const id = state.documents[p.document_id];
        if (id && !docs.includes(id)) docs.push(id);
      }
      runs.set(q._id, docs);
    }
  }
  await Promise.all([worker(), worker()]);
  return { runs, took, stages };
}

async function measureLatency(base: string, state: State, queries: { text: string }[]) {
  const call = (text: string) =>
    api(base, "/chats/fast-raw-query", { key: state.key, body: { knowledge_base_id: state.kbId, content: text, chunk_count: 10 } });
  for (const q of queries.slice(0, 20)) await call(q.text); // warm-up: isolates, caches, the vector index in memory
  const times: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    await call(q.text);
    times.push(performance.now() - t);
  }
  return times;
}

const f3 = (x: number) => x.toFixed(3);

async function main() {
  if (!args.dataset) throw new Error("usage: npm run eval:retrieval -- --dataset <BEIR dataset directory> [--state DIR]");
  const datasetDir = path.resolve(args.dataset);
  const data = loadDataset(datasetDir);
  const corpus = args.docs ? data.corpus.slice(0, Number(args.docs)) : data.corpus;
  const queries = args.queries ? data.queries.slice(0, Number(args.queries)) : data.queries;
  const datasetKey = `${datasetDir}#${corpus.length}`;
  console.log(`Dataset ${datasetDir}: ${corpus.length} documents, ${queries.length} judged queries`);

  const keepState = !!args.state;
  const stateDir = args.state ? path.resolve(args.state) : scratchDir("kb-eval-");
  mkdirSync(stateDir, { recursive: true });
  const stateFile = path.join(stateDir, "eval-state.json");
  let server: ChildProcess | null = null;
  let base = args.url?.replace(/\/+$/, "");
  const forwarded = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => FORWARDED.test(k) && v !== undefined)) as Record<string, string>;
  try {
    if (!base) {
      const port = Number(args.port);
      base = `http://127.0.0.1:${port}`;
      console.log(`starting wrangler dev on ${base} (state in ${stateDir}) ...`);
      server = startServer(stateDir, port, { EVAL_ENDPOINTS: "true", ...forwarded });
    }
    await waitForServer(base, 120_000);

    let state: State | null = null;
    if (existsSync(stateFile)) {
      const saved = JSON.parse(readFileSync(stateFile, "utf8")) as State;
      if (saved.dataset === datasetKey) {
        state = saved;
        console.log(`reusing the ingested knowledge base ${state.kbId} from ${stateFile}`);
      }
    }
    if (!state) {
      console.log(`ingesting ${corpus.length} documents through the API ...`);
      state = await ingest(base, corpus, Number(args.concurrency), datasetKey);
      if (keepState) writeFileSync(stateFile, JSON.stringify(state));
    }

    const configs = args["no-ablations"] ? [...CONFIGS] : [...CONFIGS, ...ABLATIONS];
    if (args["fusion-grid"]) {
      for (const [rrf_k, weights] of [
        [60, [0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1]],
        [10, [0.05, 0.1, 0.2, 1]],
      ] as const) {
        for (const vector_weight of weights) configs.push({ name: `fused, k ${rrf_k}, vector weight ${vector_weight}`, body: { rrf_k, vector_weight } });
      }
    }
    let stageReport = "";
    const results: Array<{ name: string; metrics: Metrics; serverP50: number; serverP95: number }> = [];
    for (const config of configs) {
      const { runs, took, stages } = await runConfig(base, state, queries, config);
      if (!stageReport) {
        stageReport = [...stages].map(([k, v]) => `${k} ${(v.reduce((a, b) => a + b, 0) / v.length).toFixed(1)}`).join(", ");
      }
      const metrics = score(runs, data.qrels, queries.map((q) => q._id));
      results.push({ name: config.name, metrics, serverP50: pct(took, 50), serverP95: pct(took, 95) });
      console.log(`  ${config.name}: nDCG@10 ${f3(metrics.ndcg10)}, R@10 ${f3(metrics.recall10)}, R@100 ${f3(metrics.recall100)}, MRR@10 ${f3(metrics.mrr10)}`);
    }
    const latency = await measureLatency(base, state, queries);

    const embedding = forwarded.EMBEDDING_PROVIDER ? `${forwarded.EMBEDDING_PROVIDER} ${forwarded.EMBEDDING_MODEL ?? ""}`.trim() : "hash (default)";
    const lines = [
      ``,
      `Retrieval evaluation: ${path.basename(datasetDir)}, ${corpus.length} documents (${state.chunks} chunks), ${queries.length} queries; embeddings: ${embedding}`,
      ``,
      `| configuration | nDCG@10 | R@10 | R@100 | MRR@10 | search p50 / p95 (server) |`,
      `|---|---:|---:|---:|---:|---:|`,
      ...results.map(
        (r) =>
          `| ${r.name} | ${f3(r.metrics.ndcg10)} | ${f3(r.metrics.recall10)} | ${f3(r.metrics.recall100)} | ${f3(r.metrics.mrr10)} | ${r.serverP50} / ${r.serverP95} ms |`,
      ),
      ``,
      `Ingestion: ${state.docs} documents in ${state.ingestSeconds.toFixed(1)} s (first upload to last processed; ${(state.docs / state.ingestSeconds).toFixed(1)} documents/s)`,
      `Server-side stages of the default search, mean ms (the two legs run in parallel): ${stageReport}`,
      `fast-raw-query over HTTP (chunk_count 10, ${latency.length} queries, one at a time): p50 ${pct(latency, 50).toFixed(1)} ms, p95 ${pct(latency, 95).toFixed(1)} ms`,
      ``,
    ];
    console.log(lines.join("\n"));
    if (args.json) {
      writeFileSync(
        args.json,
        JSON.stringify({ dataset: datasetDir, documents: state.docs, chunks: state.chunks, queries: queries.length, embedding, results, ingestSeconds: state.ingestSeconds, latency: { p50: pct(latency, 50), p95: pct(latency, 95) } }, null, 2),
      );
    }
  } finally {
    await stopServer(server);
    if (!keepState) rmSync(stateDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

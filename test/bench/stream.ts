/**
 * `npm run bench:stream`: N concurrent SSE streams against a local wrangler dev
 * whose model is a local OpenAI-compatible server streaming at a fixed token
 * cadence. Prints time to first event, time to first answer token, the latency
 * the service adds per token over the upstream's (client arrival time minus the
 * moment the upstream wrote that token; both clocks are this process), and
 * errors.
 *
 *   BENCH_STREAMS=20     concurrent streams
 *   BENCH_TOKEN_MS=20    upstream cadence between tokens
 *   BENCH_PORT=8792      port for wrangler dev
 *   BENCH_ROUNDS=1       rounds of STREAMS new streams, one after the other, each printed (the first round also
 *                        pays the isolate's first use of the turn's code: V8 compiles functions on first call)
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createOpenAIHandler } from "../servers/openai-chat.ts";
import { api, setUpKnowledgeBase, pct, startDevServer, uploadAndWait } from "./lib.ts";

const STREAMS = Number(process.env.BENCH_STREAMS ?? 20);
const TOKEN_MS = Number(process.env.BENCH_TOKEN_MS ?? 20);
const PORT = Number(process.env.BENCH_PORT ?? 8792);
const now = () => performance.timeOrigin + performance.now();

const ANSWER = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ") + " [1].";
const upstream = new Map<string, number[]>(); // nonce -> write time of each token

async function main() {
  const handler = createOpenAIHandler({
    cadenceMs: TOKEN_MS,
    answer: ANSWER,
    onToken: (body, index, at) => {
      const nonce = /bench-nonce-\d+-\d+/.exec(body)?.[0];
      if (!nonce) return;
      const list = upstream.get(nonce) ?? [];
      list[index] = at;
      upstream.set(nonce, list);
    },
  });
  const model = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((r) => model.listen(0, "127.0.0.1", r));
  const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;

  console.log(`starting wrangler dev on 127.0.0.1:${PORT} (model server ${modelUrl}, ${TOKEN_MS} ms/token) ...`);
  const server = await startDevServer({
    port: PORT,
    vars: {
      OPENAI_BASE_URL: modelUrl,
      OPENAI_API_KEY: "bench",
      MODELS: JSON.stringify([{ id: "bench-model", context_window: 16000, pricing: { input_per_1k: 0.1, output_per_1k: 0.1 } }]),
    },
  });
  try {
    const { cookie, kb, org } = await setUpKnowledgeBase(server.base, "stream");
    await api(server.base, `/billing/organizations/${org.id}/credits`, {
      cookie,
      body: { amount: 100_000 },
    });
    await uploadAndWait(server.base, { cookie }, kb, "handbook.md", "# Handbook\n\nRefunds are paid within 5 business days of the request.");
    const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
    for (let round = 1; round <= ROUNDS; round++) {
      const label = ROUNDS > 1 ? ` (round ${round} of ${ROUNDS}${round === 1 ? ": the isolate's first turns" : ""})` : "";
      await runRound(server.base, cookie, kb, round, label);
    }
  } finally {
    await server.stop();
    model.close();
  }
}

/** One round: STREAMS new chats, one streamed turn each, all at once; prints the round's figures. */
async function runRound(base: string, cookie: string, kb: { id: string; tenant_id: string }, round: number, label: string) {
  const chats = await Promise.all(
    Array.from({ length: STREAMS }, async () => {
      const id = crypto.randomUUID();
      await api(base, "/chats", { cookie, body: { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "bench-model" } });
      return id;
    }),
  );

  const results = await Promise.all(
    chats.map(async (chatId, i) => {
      const nonce = `bench-nonce-${round}-${i}`;
      const start = now();
      const res = await fetch(`${base}/api/v1/chats/${chatId}/messages/stream`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Cookie: cookie },
        body: JSON.stringify({ content: `How are refunds paid? ${nonce}`, model: "bench-model", agent_mode: "quick" }),
      });
      let firstEvent = NaN;
      let firstToken = NaN;
      const arrivals: number[] = [];
      let error = res.ok ? "" : `HTTP ${res.status}`;
      let buffer = "";
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const t = now();
        buffer += value;
        let k: number;
        while ((k = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, k);
          buffer = buffer.slice(k + 2);
          const data = block.split("\n").find((l) => l.startsWith("data:"));
          if (!data) continue;
          const e = JSON.parse(data.slice(5));
          if (Number.isNaN(firstEvent)) firstEvent = t - start;
          if (e.type === "final_response" && !e.isComplete) {
            if (Number.isNaN(firstToken)) firstToken = t - start;
            arrivals.push(t);
          }
          if (e.type === "error") error = e.message;
        }
      }
      const written = upstream.get(nonce) ?? [];
      const added = arrivals.map((t, idx) => t - written[idx]).filter((x) => Number.isFinite(x));
      return { firstEvent, firstToken, added, tokens: arrivals.length, error };
    }),
  );

  const ok = results.filter((r) => !r.error);
  const ttfe = ok.map((r) => r.firstEvent);
  const ttft = ok.map((r) => r.firstToken);
  const added = ok.flatMap((r) => r.added);
  const f = (x: number) => `${x.toFixed(1)} ms`;
  console.log(
    [
      ``,
      `Stream benchmark: ${STREAMS} concurrent streams, upstream ${TOKEN_MS} ms/token, ${ok[0]?.tokens ?? 0} tokens per answer, local wrangler dev${label}`,
      `  time to first event:        p50 ${f(pct(ttfe, 50))}, p95 ${f(pct(ttfe, 95))}`,
      `  time to first answer token: p50 ${f(pct(ttft, 50))}, p95 ${f(pct(ttft, 95))}`,
      `  latency added per token:    p50 ${f(pct(added, 50))}, p95 ${f(pct(added, 95))}, mean ${f(added.reduce((a, b) => a + b, 0) / (added.length || 1))}`,
      `  errors: ${results.length - ok.length}${results.find((r) => r.error) ? ` (first: ${results.find((r) => r.error)!.error})` : ""}`,
      ``,
    ].join("\n"),
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

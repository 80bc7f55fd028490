/**
 * `npm run bench:profile`: a CPU profile of quick-mode offline answers (or streamed answers) taken through the
 * runtime's DevTools endpoint (`wrangler dev --inspector-port`), summarised as self and inclusive time per function.
 * For finding where a turn's milliseconds go; `bench:cpu` is the figure.
 *
 *   BENCH_ANSWERS=40          turns profiled (sequential)
 *   BENCH_PROFILE_MODE=quick  quick (offline model, JSON) | stream (a local OpenAI-compatible server, 220 tokens) |
 *                             streams10 (BENCH_ANSWERS rounds of 10 concurrent streams, 61 tokens at 20 ms/token)
 *   BENCH_PROFILE_NEXT=1      profile the chats' second turns (their Durable Objects already started)
 *   BENCH_PROFILE_OUT=<file>  also write the raw .cpuprofile (open it in Chrome DevTools)
 *   BENCH_PORT=8798, BENCH_INSPECTOR_PORT=9329
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { createOpenAIHandler } from "../servers/openai-chat.ts";
import { api, root, sleep, startModelBench } from "./lib.ts";

const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 40);
const PORT = Number(process.env.BENCH_PORT ?? 8798);
process.env.BENCH_INSPECTOR_PORT ??= "9329";
const INSPECTOR = Number(process.env.BENCH_INSPECTOR_PORT);
const MODE = process.env.BENCH_PROFILE_MODE ?? "quick";

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** One DevTools session per target the inspector lists (each worker/isolate). */
async function sessions(): Promise<{ title: string; send: (method: string, params?: object) => Promise<any>; close: () => void }[]> {
  const targets = (await (await fetch(`http://127.0.0.1:${INSPECTOR}/json`)).json()) as { title: string; webSocketDebuggerUrl: string }[];
  return Promise.all(
    targets.map(async (t) => {
      // The inspector proxy accepts only local DevTools origins (undici's WebSocket takes headers).
      const ws = new WebSocket(t.webSocketDebuggerUrl, { headers: { Origin: "http://localhost" } } as unknown as string[]);
      await new Promise((r, j) => {
        ws.addEventListener("open", r);
        ws.addEventListener("error", j);
      });
      let next = 1;
      const waiting = new Map<number, (v: any) => void>();
      ws.addEventListener("message", (m: MessageEvent) => {
        const msg = JSON.parse(String(m.data));
        if (msg.id && waiting.has(msg.id)) waiting.get(msg.id)!(msg.result ?? msg.error);
      });
      const send = (method: string, params: object = {}) =>
        new Promise<any>((r) => {
          const id = next++;
          waiting.set(id, r);
          ws.send(JSON.stringify({ id, method, params }));
        });
      return { title: t.title, send, close: () => ws.close() };
    }),
  );
}

/** Where a bundled position came from (the dev bundle's source map), when the map can be read. */
function sourceMapper(): (f: CallFrame) => string {
  try {
    const dir = path.join(root, ".wrangler/tmp");
    const bundles = readdirSync(dir)
      .filter((d) => d.startsWith("dev-") && existsSync(path.join(dir, d, "index.js.map")))
      .map((d) => path.join(dir, d, "index.js.map"))
      .sort((x, y) => statSync(y).mtimeMs - statSync(x).mtimeMs);
    const { SourceMapConsumer } = createRequire(import.meta.url)("source-map-js");
    const map = new SourceMapConsumer(JSON.parse(readFileSync(bundles[0], "utf8")));
    return (f) => {
      if (!f.url.endsWith("index.js")) return f.url;
      const o = map.originalPositionFor({ line: f.lineNumber + 1, column: f.columnNumber });
      const source = String(o.source ?? "?");
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source)?.[1];
      // A dependency's frames keep its package name (drizzle-orm's own src/ is not ours).
      return pkg ? `${pkg}:${source.replace(/^.*node_modules\/(?:@[^/]+\/)?[^/]+\//, "")}:${o.line}` : `${source.replace(/^.*\/src\//, "src/")}:${o.line}`;
    };
  } catch {
    return (f) => `${f.url.split("/").pop()}:${f.lineNumber + 1}`;
  }
}

/**
 * Self and inclusive samples per function. Samples are counted, not weighted by their time deltas: the sampler
 * does not run while the isolate waits, so the first sample after a wait carries the whole wait.
 */
function summarise(p: Profile, title: string, where: (f: CallFrame) => string) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const count = new Map<number, number>();
  for (const id of p.samples) count.set(id, (count.get(id) ?? 0) + 1);
  const key = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${where(f)}`;
  const selfBy = new Map<string, number>();
  const inclBy = new Map<string, number>();
  let busy = 0;
  for (const [id, n] of count) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") continue;
    busy += n;
    selfBy.set(key(frame), (selfBy.get(key(frame)) ?? 0) + n);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(byId.get(cur)!.callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclBy.set(k, (inclBy.get(k) ?? 0) + n);
    }
  }
  const deltas = [...p.timeDeltas].sort((a, b) => a - b);
  const interval = deltas[Math.floor(deltas.length / 4)] / 1000; // the sampler's own pace while the isolate runs
  const turns = ANSWERS * (MODE === "streams10" ? 10 : 1);
  const top = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, c]) => `  ${(c / turns).toFixed(2).padStart(7)}  ${k}`);
  console.log(`\n== ${title}: ${(busy / turns).toFixed(1)} busy samples per turn, one every ~${interval.toFixed(2)} ms (~${((busy / turns) * interval).toFixed(1)} ms of the isolate per turn) ==`);
  console.log("-- self samples per turn, by where the code comes from --");
  const byOrigin = new Map<string, number>();
  for (const [k, c] of selfBy) byOrigin.set(origin(k), (byOrigin.get(origin(k)) ?? 0) + c);
  console.log(top(byOrigin, 20).join("\n"));
  console.log("-- self samples per turn --");
  console.log(top(selfBy, 45).join("\n"));
  console.log("-- inclusive samples per turn --");
  console.log(top(inclBy, 70).join("\n"));
}

/** A frame's origin: our src/ by folder, a dependency by package, the runtime's own JavaScript, or native code. */
function origin(key: string): string {
  const where = key.slice(key.indexOf(" ") + 1);
  if (where.startsWith("src/")) return where.split("/").slice(0, 3).join("/").replace(/\.ts:\d+$/, ".ts");
  if (where.startsWith("cloudflare-internal") || where.startsWith("node-internal")) return "runtime JavaScript (cloudflare-internal)";
  if (!where || where.startsWith("?")) return "native (runtime built-ins, GC, program)";
  const pkg = /^([^:]+):/.exec(where)?.[1];
  if (pkg === "src") return "package drizzle-orm (its source maps name node_modules/src/)";
  return pkg && !pkg.includes("/") || pkg?.startsWith("@") ? `package ${pkg}` : `other ${where.split(":")[0]}`;
}

async function main() {
  const concurrent = MODE === "streams10";
  const handler = concurrent
    ? createOpenAIHandler({ cadenceMs: 20, answer: Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ") + " [1]." })
    : createOpenAIHandler({ cadenceMs: 1, answer: Array.from({ length: 219 }, (_, i) => `word${i}`).join(" ") + " [1]." });
  const model = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((r) => model.listen(0, "127.0.0.1", r));
  const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
  const { server, kb, key } = await startModelBench({ port: PORT, modelUrl, name: "profile" });
  try {
    const streamed = MODE !== "quick";
    const m = streamed ? "bench-model" : "local-extractive";
    const newChat = async () => {
      const id = crypto.randomUUID();
      await api(server.base, "/chats", { key, body: { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: m } });
      return id;
    };
    const send = async (chatId: string) => {
      const res = await fetch(`${server.base}/api/v1/chats/${chatId}/messages${streamed ? "/stream" : ""}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify({ content: "How long do refunds take?", model: m, agent_mode: "quick" }),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`turn failed: ${res.status} ${text.slice(0, 300)}`);
    };
    // BENCH_PROFILE_COLD=1: no warm-up (the isolate's first turns, as bench:stream's single round measures).
    const cold = process.env.BENCH_PROFILE_COLD === "1";
    if (!cold) for (let i = 0; i < 3; i++) await send(await newChat());
    const chats = await Promise.all(Array.from({ length: ANSWERS * (concurrent ? 10 : 1) }, () => newChat()));
    if (concurrent && !cold) await Promise.all(chats.slice(0, 10).map(send)); // a warm-up round
    // BENCH_PROFILE_NEXT=1: the chats' second turns (each chat's object already started by its first).
    if (process.env.BENCH_PROFILE_NEXT === "1") for (const id of chats) await send(id);
    const ss = await sessions();
    for (const s of ss) {
      await s.send("Profiler.enable");
      await s.send("Profiler.setSamplingInterval", { interval: 100 });
    }
    await sleep(500);
    for (const s of ss) await s.send("Profiler.start");
    if (concurrent) for (let r = 0; r < ANSWERS; r++) await Promise.all(chats.slice(r * 10, r * 10 + 10).map(send));
    else for (const id of chats) await send(id);
    await sleep(500);
    for (const s of ss) {
      const { profile } = (await s.send("Profiler.stop")) as { profile: Profile };
      if (process.env.BENCH_PROFILE_OUT) writeFileSync(`${process.env.BENCH_PROFILE_OUT}.${ss.indexOf(s)}.cpuprofile`, JSON.stringify(profile));
      summarise(profile, s.title, sourceMapper());
      s.close();
    }
  } finally {
    await server.stop();
    model.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

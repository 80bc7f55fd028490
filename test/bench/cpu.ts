/**
 * `npm run bench:cpu`: CPU milliseconds the service spends per quick-mode answer (offline model, JSON) and per
 * streamed token (a provider model streaming from a local OpenAI-compatible server), measured from outside as the
 * CPU time of the `wrangler dev` processes (`workerd`, from /proc; Linux only) over sequential turns. The
 * per-token figure is the difference between long and short streamed answers divided by the tokens between them,
 * so a turn's fixed cost cancels out. Local D1 (SQLite) runs inside workerd and is counted too. A bare request
 * (`GET /health`, the same number) is measured as well. wrangler dev runs two `workerd` processes: the runtime
 * (the Worker, its Durable Objects, local D1) and a proxy in front of it that forwards every request, which
 * production does not have. Both are counted, and the runtime is also reported alone. CPU time is read per thread
 * in nanoseconds (/proc/<pid>/task/<tid>/schedstat), not in 10 ms clock ticks.
 *
 * Each quick answer is a new chat's first turn, which also starts the chat's Durable Object; wrangler dev then
 * records the object's name in a SQLite file of its own (a development aid: production does not, and a chat's
 * object keeps nothing in storage). The same chats' next turns are measured too: a conversation's further turns,
 * without that start.
 *
 * Each figure is the median of BENCH_ROUNDS rounds, after BENCH_WARMUP turns of each kind: a deployed isolate
 * serves many requests, so its steady state (its code compiled by V8's optimizing tiers) is what a turn costs;
 * BENCH_WARMUP=1 measures the isolate's first turns instead.
 *
 *   BENCH_ANSWERS=40     quick answers (and streamed answers of each length) per round
 *   BENCH_ROUNDS=3
 *   BENCH_WARMUP=100     quick answers before the first round (and a fifth as many streamed answers of each length)
 *   BENCH_PORT=8797
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { readdirSync, readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { createOpenAIHandler } from "../servers/openai-chat.ts";
import { api, startModelBench } from "./lib.ts";

const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 100);
const PORT = Number(process.env.BENCH_PORT ?? 8797);
const SHORT = 20;
const LONG = 220;
const words = (n: number) => Array.from({ length: n - 1 }, (_, i) => `word${i}`).join(" ") + " [1].";

/** CPU ms a process has run (all its threads, nanoseconds from schedstat): finer than the 10 ms clock ticks of stat. */
function processCpuMs(pid: string): number {
  let ns = 0;
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const t of tasks) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended
    }
  }
  return ns / 1e6;
}

/**
 * CPU ms of the processes in a process group: all of them; the `workerd` ones; and of those, the runtime that
 * runs the Worker, without wrangler dev's proxy (the `workerd` listening on the public port, BENCH_PORT, which
 * forwards each request to the runtime; production has no such hop).
 */
function cpuOf(pgid: number): Cpu {
  const cpu: Cpu = { all: 0, workerd: 0, runtime: 0 };
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    let cmdline = "";
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
      cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // f[0] = state (field 3)
    if (Number(f[2]) !== pgid) continue;
    const ms = processCpuMs(name);
    cpu.all += ms;
    if (!comm.startsWith("workerd")) continue;
    cpu.workerd += ms;
    if (!cmdline.includes(`=127.0.0.1:${PORT}\0`)) cpu.runtime += ms;
  }
  return cpu;
}

type Cpu = { all: number; workerd: number; runtime: number };

async function measure<T>(pgid: number, run: () => Promise<T>): Promise<Cpu> {
  await new Promise((r) => setTimeout(r, 500)); // let background work (waitUntil) settle
  const a = cpuOf(pgid);
  await run();
  await new Promise((r) => setTimeout(r, 500));
  const b = cpuOf(pgid);
  return { all: b.all - a.all, workerd: b.workerd - a.workerd, runtime: b.runtime - a.runtime };
}

async function main() {
  const handlers = { short: createOpenAIHandler({ cadenceMs: 1, answer: words(SHORT) }), long: createOpenAIHandler({ cadenceMs: 1, answer: words(LONG) }) };
  const model = http.createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const replay = Object.assign(Readable.from([raw]), { url: req.url, method: req.method, headers: req.headers }) as unknown as http.IncomingMessage;
    void (raw.includes("bench-long") ? handlers.long : handlers.short)(replay, res);
  });
  await new Promise<void>((r) => model.listen(0, "127.0.0.1", r));
  const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
  console.log(`starting wrangler dev on 127.0.0.1:${PORT} ...`);
  const { server, kb, key } = await startModelBench({ port: PORT, modelUrl, name: "cpu" });
  try {
    const newChat = async (m: string) => {
      const id = crypto.randomUUID();
      await api(server.base, "/chats", { key, body: { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: m } });
      return id;
    };
    const send = async (chatId: string, body: object, stream: boolean) => {
      const res = await fetch(`${server.base}/api/v1/chats/${chatId}/messages${stream ? "/stream" : ""}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok || (stream && !text.includes('"type":"done"'))) throw new Error(`turn failed: ${res.status} ${text.slice(0, 300)}`);
    };
    const sequential = async (chats: string[], body: object, stream: boolean) => {
      for (const id of chats) await send(id, body, stream);
    };
    const quick = { content: "How long do refunds take?", model: "local-extractive", agent_mode: "quick" };
    const streamed = (long: boolean) => ({ content: `How are refunds paid? ${long ? "bench-long" : "bench-short"}`, model: "bench-model", agent_mode: "quick" });

    // Warm-up (the isolate, the key cache, the model server).
    const warm = Math.max(1, Math.ceil(WARMUP / 5));
    await sequential(await Promise.all(Array.from({ length: WARMUP }, () => newChat("local-extractive"))), quick, false);
    await sequential(await Promise.all(Array.from({ length: warm }, () => newChat("bench-model"))), streamed(false), true);
    await sequential(await Promise.all(Array.from({ length: warm }, () => newChat("bench-model"))), streamed(true), true);

    const pgid = server.pid!;
    const rounds: { bare: Cpu; local: Cpu; next: Cpu; short: Cpu; long: Cpu }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const localChats = await Promise.all(Array.from({ length: ANSWERS }, () => newChat("local-extractive")));
      const shortChats = await Promise.all(Array.from({ length: ANSWERS }, () => newChat("bench-model")));
      const longChats = await Promise.all(Array.from({ length: ANSWERS }, () => newChat("bench-model")));
      const bare = await measure(pgid, async () => {
        for (let i = 0; i < ANSWERS; i++) await (await fetch(`${server.base}/health`)).text();
      });
      const local = await measure(pgid, () => sequential(localChats, quick, false));
      // The same chats' second turns: their Durable Objects are running (wrangler dev's bookkeeping of a new
      // object, not in production, is paid by the first turn).
      const next = await measure(pgid, () => sequential(localChats, quick, false));
      const short = await measure(pgid, () => sequential(shortChats, streamed(false), true));
      const long = await measure(pgid, () => sequential(longChats, streamed(true), true));
      rounds.push({ bare, local, next, short, long });
      console.log(
        `  round ${r + 1}: quick answer ${(local.workerd / ANSWERS).toFixed(2)} ms (runtime ${(local.runtime / ANSWERS).toFixed(2)}), ` +
          `next turn ${(next.workerd / ANSWERS).toFixed(2)} ms (${(next.runtime / ANSWERS).toFixed(2)}), ` +
          `per token ${((long.workerd - short.workerd) / (ANSWERS * (LONG - SHORT))).toFixed(2)} ms (${((long.runtime - short.runtime) / (ANSWERS * (LONG - SHORT))).toFixed(2)})`,
      );
    }
    const median = (f: (r: (typeof rounds)[number]) => number) => {
      const xs = rounds.map(f).sort((a, b) => a - b);
      return xs[Math.floor(xs.length / 2)];
    };
    const kinds = ["workerd", "runtime", "all"] as const;
    const m = (k: "bare" | "local" | "next" | "short" | "long"): Cpu => Object.fromEntries(kinds.map((c) => [c, median((r) => r[k][c])])) as Cpu;
    const [bare, local, next, short, long] = [m("bare"), m("local"), m("next"), m("short"), m("long")];
    const perToken = Object.fromEntries(kinds.map((c) => [c, median((r) => r.long[c] - r.short[c])])) as Cpu;
    const tokens = ANSWERS * (LONG - SHORT);
    const row = (label: string, x: Cpu, n: number, unit: string) =>
      `  ${label.padEnd(36)} ${(x.workerd / n).toFixed(2).padStart(6)} ms ${(x.runtime / n).toFixed(2).padStart(12)} ms ${(x.all / n).toFixed(2).padStart(12)} ms   per ${unit}`;
    console.log(
      [
        ``,
        `bench:cpu — ${ANSWERS} sequential turns each, median of ${ROUNDS} rounds after ${WARMUP} warm-up answers`,
        `  CPU of: workerd (the runtime and wrangler dev's proxy); the runtime alone (the Worker, its Durable Objects and local D1); all dev-server processes`,
        `  ${"".padEnd(36)} ${"workerd".padStart(9)} ${"runtime".padStart(15)} ${"all".padStart(15)}`,
        row("quick answer, offline model (JSON)", local, ANSWERS, "answer"),
        row("the same chats' next quick answers", next, ANSWERS, "answer"),
        row(`streamed answer of ${SHORT} tokens`, short, ANSWERS, "answer"),
        row(`streamed answer of ${LONG} tokens`, long, ANSWERS, "answer"),
        row("per streamed token", perToken, tokens, "token"),
        row("a bare request (GET /health)", bare, ANSWERS, "request"),
        ``,
      ].join("\n"),
    );
  } finally {
    await server.stop();
    model.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

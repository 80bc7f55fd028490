/**
 * `npm run bench:latency`: the hot paths with simulated distance to the database. Each round starts a
 * local `wrangler dev` whose every D1 round trip waits SIMULATED_D1_RTT_MS (src/db/distance.ts; never
 * set in production), then times, per path, the first byte, the first SSE event (streams) and the end.
 * The number of SEQUENTIAL D1 round trips on each path is what the simulated distance adds, divided by
 * it: (time at RTT r − time at RTT 0) / r. Medians of BENCH_REPEAT calls per path. Durable Object calls
 * (SIMULATED_DO_RTT_MS: every stub's fetch and RPC, every namespace) and R2 operations (SIMULATED_R2_RTT_MS)
 * are counted the same way, each kind in a round of its own (src/lib/distance.ts).
 *
 *   BENCH_RTTS=0,50,150   simulated D1 round-trip times (ms); the first must be 0
 *   BENCH_HOP_RTT=150     simulated time per Durable Object call and per R2 operation; 0: no such rounds
 *   BENCH_REPEAT=5        calls per path and RTT
 *   BENCH_PATHS=A2A       only these paths (comma-separated parts of their names)
 *   BENCH_TRACE=1         the dev server logs every hop with its stack (with BENCH_DEV_LOG=<file>)
 *   BENCH_PORT=8795
 */
import { api, setUpKnowledgeBase, startDevServer, uploadAndWait, type ApiAuth } from "./lib.ts";

const RTTS = (process.env.BENCH_RTTS ?? "0,50,150").split(",").map(Number);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 5);
const PORT = Number(process.env.BENCH_PORT ?? 8795);
/** The simulated time per Durable Object call and per R2 operation, each in a round of its own; 0 skips them. */
const HOP_RTT = Number(process.env.BENCH_HOP_RTT ?? 150);
/** BENCH_TRACE=1: every hop logged by the dev server with its stack (SIMULATED_HOPS_TRACE; see it with BENCH_DEV_LOG). */
const TRACE = !!process.env.BENCH_TRACE;
/** BENCH_PATHS=A2A,MCP: only the paths whose names contain one of these. */
const ONLY = process.env.BENCH_PATHS?.split(",").filter(Boolean);

interface Timing {
  firstByte: number;
  firstEvent: number | null;
  done: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Times one request: headers (first byte), the first SSE `data:` line, the end of the body. */
async function timed(base: string, path: string, auth: ApiAuth, body: unknown, headers: Record<string, string> = {}): Promise<Timing> {
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(auth.key ? { Authorization: `Bearer ${auth.key}` } : {}), ...headers },
    body: JSON.stringify(body),
  });
  const firstByte = performance.now() - t0;
  let firstEvent: number | null = null;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (firstEvent === null && text.includes("data:")) firstEvent = performance.now() - t0;
  }
  if (!res.ok) throw new Error(`${path} -> ${res.status}: ${text.slice(0, 300)}`);
  return { firstByte, firstEvent: res.headers.get("content-type")?.includes("event-stream") ? firstEvent : null, done: performance.now() - t0 };
}

type Path = { name: string; run: () => Promise<Timing> };

async function pathsOf(base: string) {
  const { cookie, kb, org, envId } = await setUpKnowledgeBase(base, "latency");
  await uploadAndWait(base, { cookie }, kb, "handbook.md", "# Handbook\n\n## Refunds\nRefunds are paid within 5 business days of the request.\n");
  const key = (await api(base, `/environments/${envId}/api-keys`, { cookie, body: { name: "bench", scopes: ["query:rag", "documents:read", "agents:write", "agents:read"] } })).body.key as string;
  const auth = { key };
  const agent = (await api(base, "/agents", { ...auth, body: { tenant_id: org.default_tenant_id, knowledge_base_id: kb.id, name: "Desk", goal: "Answer from the handbook", model: "local-extractive", agent_mode: "quick" } })).body;
  // A second knowledge base whose turns use the caller's memory (the tenant's memory on, durable).
  const memoryKb = (await api(base, "/knowledge-bases", { cookie, body: { tenant_id: kb.tenant_id, name: "latency-memory" } })).body as { id: string; tenant_id: string };
  await api(base, `/knowledge-bases/${memoryKb.id}`, { cookie, method: "PATCH", body: { kbMemoryMode: "subject" } });
  await api(base, `/tenants/${kb.tenant_id}/memory-settings`, { cookie, method: "PATCH", body: { mode: "durable", retention: "explicit_only" } });
  await uploadAndWait(base, { cookie }, memoryKb, "handbook.md", "# Handbook\n\n## Refunds\nRefunds are paid within 5 business days of the request.\n");
  const newChat = async (where: { id: string; tenant_id: string } = kb) => {
    const id = crypto.randomUUID();
    await api(base, "/chats", { ...auth, body: { id, tenant_id: where.tenant_id, knowledge_base_id: where.id, model: "local-extractive" } });
    return id;
  };
  const q = "How long do refunds take?";
  const turn = { content: q, model: "local-extractive", agent_mode: "quick" };
  const paths: Path[] = [
    { name: "streamed answer", run: async () => timed(base, `/api/v1/chats/${await newChat()}/messages/stream`, auth, turn) },
    { name: "streamed, deep", run: async () => timed(base, `/api/v1/chats/${await newChat()}/messages/stream`, auth, { ...turn, agent_mode: "deep" }) },
    { name: "JSON answer", run: async () => timed(base, `/api/v1/chats/${await newChat()}/messages`, auth, turn) },
    { name: "JSON, memory on", run: async () => timed(base, `/api/v1/chats/${await newChat(memoryKb)}/messages`, auth, turn) },
    {
      name: "POST /chats + message",
      run: () => timed(base, "/api/v1/chats", auth, { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message: q, agent_mode: "quick" }),
    },
    { name: "fast-raw-query", run: () => timed(base, "/api/v1/chats/fast-raw-query", auth, { knowledge_base_id: kb.id, query: q }) },
    {
      name: "MCP search tool",
      run: () =>
        timed(base, "/api/v1/mcp", auth, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search", arguments: { query: q, knowledge_base_id: kb.id } } }, {
          Accept: "application/json, text/event-stream",
        }),
    },
    {
      name: "A2A SendMessage",
      run: () =>
        timed(base, `/api/v1/agents/${agent.id}/a2a`, auth, { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: q }] } } }, {
          "A2A-Version": "1.0",
        }),
    },
  ];
  return paths;
}

/** One round: a fresh `wrangler dev` with the given simulated distances, every path timed (medians). */
async function measure(label: string, vars: Record<string, string>): Promise<Map<string, Timing>> {
  console.log(`round with ${label}: starting wrangler dev ...`);
  const server = await startDevServer({ port: PORT, vars: TRACE ? { ...vars, SIMULATED_HOPS_TRACE: "1" } : vars });
  try {
    const paths = (await pathsOf(server.base)).filter((p) => !ONLY || ONLY.some((o) => p.name.includes(o)));
    const out = new Map<string, Timing>();
    for (const p of paths) {
      await p.run(); // warm-up
      const runs: Timing[] = [];
      for (let i = 0; i < REPEAT; i++) {
        if (TRACE) console.log(`[bench] ${p.name} #${i + 1}`);
        runs.push(await p.run());
      }
      out.set(p.name, {
        firstByte: median(runs.map((r) => r.firstByte)),
        firstEvent: runs[0].firstEvent === null ? null : median(runs.map((r) => r.firstEvent!)),
        done: median(runs.map((r) => r.done)),
      });
    }
    return out;
  } finally {
    await server.stop();
  }
}

const ms = (x: number | null) => (x === null ? "—" : `${x.toFixed(0)} ms`);
/** Sequential hops: the time a simulated distance added, divided by it. */
const hops = (x: number | null, b: number | null, rtt: number) => (x === null || b === null || rtt === 0 ? null : (x - b) / rtt);
const trips = (x: number | null, b: number | null, rtt: number) => {
  const h = hops(x, b, rtt);
  return h === null ? "" : ` (${h.toFixed(1)} RT)`;
};

async function main() {
  if (RTTS[0] !== 0) throw new Error("BENCH_RTTS must start with 0 (the baseline)");
  const rounds = new Map<number, Map<string, Timing>>();
  for (const rtt of RTTS) rounds.set(rtt, await measure(`simulated D1 RTT ${rtt} ms`, { SIMULATED_D1_RTT_MS: String(rtt) }));
  // The Durable Object and R2 hops: one round each, that kind alone at HOP_RTT (the others at 0).
  const doRound = HOP_RTT > 0 ? await measure(`simulated Durable Object RTT ${HOP_RTT} ms`, { SIMULATED_DO_RTT_MS: String(HOP_RTT) }) : null;
  const r2Round = HOP_RTT > 0 ? await measure(`simulated R2 RTT ${HOP_RTT} ms`, { SIMULATED_R2_RTT_MS: String(HOP_RTT) }) : null;
  const base = rounds.get(0)!;
  console.log(`\nbench:latency — medians of ${REPEAT} calls; RT = sequential D1 round trips = added time / simulated RTT`);
  console.log(["path".padEnd(22), "RTT".padStart(5), "first byte".padStart(22), "first event".padStart(22), "done".padStart(22)].join(" "));
  for (const name of base.keys()) {
    for (const rtt of RTTS) {
      const t = rounds.get(rtt)!.get(name)!;
      const b = base.get(name)!;
      console.log(
        [
          name.padEnd(22),
          String(rtt).padStart(5),
          `${ms(t.firstByte)}${trips(t.firstByte, b.firstByte, rtt)}`.padStart(22),
          `${ms(t.firstEvent)}${trips(t.firstEvent, b.firstEvent, rtt)}`.padStart(22),
          `${ms(t.done)}${trips(t.done, b.done, rtt)}`.padStart(22),
        ].join(" "),
      );
    }
  }
  const top = RTTS[RTTS.length - 1];
  if (!doRound || !r2Round || top === 0) return;
  // Within ±0.1 of a whole hop is noise (a few ms); a slightly negative count is shown as 0.0.
  const f = (h: number | null) => (h === null ? "—" : Math.max(0, h).toFixed(1));
  console.log(`\nSequential hops per path (D1 at RTT ${top} ms; Durable Object and R2 at ${HOP_RTT} ms, each kind in a round of its own)`);
  console.log(["path".padEnd(22), "first event: D1 / DO / R2".padStart(28), "done: D1 / DO / R2".padStart(28)].join(" "));
  for (const [name, b] of base) {
    const d1 = rounds.get(top)!.get(name)!;
    const dObj = doRound.get(name)!;
    const r2 = r2Round.get(name)!;
    const col = (pick: (t: Timing) => number | null) =>
      `${f(hops(pick(d1), pick(b), top))} / ${f(hops(pick(dObj), pick(b), HOP_RTT))} / ${f(hops(pick(r2), pick(b), HOP_RTT))}`;
    console.log([name.padEnd(22), col((t) => t.firstEvent).padStart(28), col((t) => t.done).padStart(28)].join(" "));
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

/**
 * `npm run bench:memory`: durable memory, end to end through the chat API of a
 * local `wrangler dev` with the offline model (local-extractive) and the
 * offline embedder (hash).
 *
 * One end user (an API key with external_subject_id) states N scripted facts
 * ("Remember that my <attribute> is <value>") in one chat; then each fact is
 * asked in a NEW chat ("What is my <attribute>?"). Printed:
 *   - recall: share of questions whose answer cites the memory holding the fact;
 *   - precision: share of the memories cited in answers that are the asked fact;
 *   - answer accuracy: share of answers whose text contains the value;
 *   - leaks: answers to ANOTHER end user of the same tenant that cite a memory (must be 0);
 *   - the latency memory adds to a turn: the same questions asked on a knowledge
 *     base with memory (kbMemoryMode subject) and one without, interleaved,
 *     same documents; p50/p95 of each and of the paired difference.
 *
 *   BENCH_FACTS=60    facts (at most 60)
 *   BENCH_PORT=8794   port for wrangler dev
 *   BENCH_SERVER=url  use a running server instead
 */
import { api, pct, setUpKnowledgeBase, startDevServer, uploadAndWait } from "./lib.ts";

const PORT = Number(process.env.BENCH_PORT ?? 8794);

const ATTRIBUTES = [
  "project code", "dentist", "favourite colour", "car", "manager", "badge number", "home town", "cat's name", "dog's name",
  "locker number", "bank", "gym", "blood type", "shoe size", "favourite band", "favourite book", "mother's maiden name",
  "license plate", "wifi password", "team name", "office room", "desk phone extension", "employee id", "cost center",
  "favourite food", "allergy", "birth month", "passport country", "primary language", "second language", "keyboard layout",
  "editor", "operating system", "phone model", "laptop model", "coffee order", "favourite sport", "football club",
  "lucky number", "zodiac sign", "hair colour", "eye colour", "middle name", "nickname", "university", "degree",
  "thesis topic", "first employer", "current employer", "job title", "salary band", "pension provider", "insurance number",
  "doctor", "pharmacy", "train station", "commute time", "parking spot", "backup email", "twitter handle",
];

function value(i: number): string {
  const words = ["ZEBRA", "KOALA", "OTTER", "LYNX", "HERON", "BISON", "GECKO", "MOOSE", "PANDA", "RAVEN", "SHREW", "TAPIR"];
  return `${words[i % words.length]}-${100 + i * 7}`;
}

const now = () => performance.now();

async function main() {
  const n = Math.min(Number(process.env.BENCH_FACTS ?? 60), ATTRIBUTES.length);
  console.log(`starting wrangler dev on 127.0.0.1:${PORT} ...`);
  const server = await startDevServer({ port: PORT, existing: process.env.BENCH_SERVER });
  const base = server.base;
  try {
    const { cookie, kb, org, tenantId, envId } = await setUpKnowledgeBase(base, "memory");
    await api(base, `/billing/organizations/${org.id}/credits`, { cookie, body: { amount: 100_000 } });
    await api(base, `/billing/tenants/${tenantId}/credits`, { cookie, body: { amount: 50_000 } }).catch(() => undefined);
    await api(base, `/tenants/${tenantId}/memory-settings`, { cookie, method: "PATCH", body: { mode: "durable", retention: "explicit_only" } });
    await api(base, `/knowledge-bases/${kb.id}`, { cookie, method: "PATCH", body: { kbMemoryMode: "subject" } });
    const plain = (await api(base, "/knowledge-bases", { cookie, body: { tenant_id: tenantId, name: "no-memory" } })).body as { id: string; tenant_id: string };
    const handbook = "# Handbook\n\n## Refunds\nRefunds are paid within 5 business days of the request.\n\n## Shipping\nOrders ship within 2 business days from Leeds.\n";
    await uploadAndWait(base, { cookie }, kb, "handbook.md", handbook);
    await uploadAndWait(base, { cookie }, plain, "handbook.md", handbook);
    const key = (await api(base, `/environments/${envId}/api-keys`, { cookie, body: { name: "bench", scopes: ["query:rag", "documents:read"] } })).body.key as string;

    const turn = async (kbId: string, subject: string, message: string, chatId?: string) => {
      const t0 = now();
      const r = chatId
        ? (await api(base, `/chats/${chatId}/messages`, { key, body: { content: message, model: "local-extractive", agent_mode: "quick", external_subject_id: subject } })).body
        : (await api(base, "/chats", { key, body: { id: crypto.randomUUID(), tenant_id: tenantId, knowledge_base_id: kbId, model: "local-extractive", agent_mode: "quick", external_subject_id: subject, message } })).body;
      return { ms: now() - t0, body: r };
    };

    // 1. State every fact in one chat.
    const first = await turn(kb.id, "bench-alice", `Remember that my ${ATTRIBUTES[0]} is ${value(0)}`);
    const chatId = first.body.chat.id as string;
    for (let i = 1; i < n; i++) await turn(kb.id, "bench-alice", `Remember that my ${ATTRIBUTES[i]} is ${value(i)}`, chatId);
    const listed = (await api(base, `/tenants/${tenantId}/memories?external_subject_id=bench-alice&limit=200`, { cookie })).body;
    console.log(`stored ${listed.total} memories for ${n} facts`);
    const memoryOf = new Map<string, string>(); // value -> memory id
    for (const m of listed.memories as Array<{ id: string; content: string }>) {
      const v = /([A-Z]+-\d+)/.exec(m.content)?.[1];
      if (v) memoryOf.set(v, m.id);
    }

    // 2. Ask each in a new chat; the same question on the knowledge base without memory, interleaved.
    let hits = 0;
    let cited = 0;
    let citedRight = 0;
    let correct = 0;
    let memoryUsed = 0;
    const withMemory: number[] = [];
    const without: number[] = [];
    const diffs: number[] = [];
    for (let i = 0; i < n; i++) {
      const q = `What is my ${ATTRIBUTES[i]}?`;
      const [a, b] = i % 2 ? [await turn(plain.id, "bench-alice", q), await turn(kb.id, "bench-alice", q)].reverse() : [await turn(kb.id, "bench-alice", q), await turn(plain.id, "bench-alice", q)];
      withMemory.push(a.ms);
      without.push(b.ms);
      diffs.push(a.ms - b.ms);
      const md = a.body.assistant_message.metadata ?? {};
      const sources = (md.sources ?? []) as Array<{ memory_id?: string }>;
      const memIds = sources.map((s) => s.memory_id).filter(Boolean) as string[];
      const want = memoryOf.get(value(i));
      cited += memIds.length;
      citedRight += memIds.filter((id) => id === want).length;
      if (want && memIds.includes(want)) hits++;
      if ((a.body.assistant_message.content as string).includes(value(i))) correct++;
      else if (process.env.BENCH_VERBOSE) console.log(`miss: ${q} -> ${a.body.assistant_message.content}`);
      if (md.memoryUsed) memoryUsed++;
    }

    // 3. Another end user of the same tenant asks the same questions.
    let leaks = 0;
    for (let i = 0; i < n; i++) {
      const r = await turn(kb.id, "bench-bob", `What is my ${ATTRIBUTES[i]}?`);
      const md = r.body.assistant_message.metadata ?? {};
      if (md.memoryUsed || (md.sources ?? []).some((s: { memory_id?: string }) => s.memory_id) || (r.body.assistant_message.content as string).includes(value(i))) leaks++;
    }

    const f = (x: number) => x.toFixed(1);
    console.log(`\nfacts: ${n} stated in one chat, each asked in a new chat (local-extractive, hash embeddings)`);
    console.log(`recall (asked fact among the answer's sources): ${f((100 * hits) / n)}% (${hits}/${n})`);
    console.log(`precision (cited memories that are the asked fact): ${f((100 * citedRight) / Math.max(1, cited))}% (${citedRight}/${cited})`);
    console.log(`answer text contains the value: ${f((100 * correct) / n)}% (${correct}/${n}); memoryUsed: ${memoryUsed}/${n}`);
    console.log(`leaks to another end user: ${leaks}/${n}`);
    console.log(`turn latency with memory    p50 ${f(pct(withMemory, 50))} ms  p95 ${f(pct(withMemory, 95))} ms`);
    console.log(`turn latency without memory p50 ${f(pct(without, 50))} ms  p95 ${f(pct(without, 95))} ms`);
    console.log(`added by memory (paired)    p50 ${f(pct(diffs, 50))} ms  p95 ${f(pct(diffs, 95))} ms`);
  } finally {
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

/**
 * `npm run bench:crash`: kills a local `wrangler dev` (SIGKILL of its whole process group) at bad moments,
 * starts it again on the same state, and prints what was stuck, lost or doubled, and how long recovery took.
 *
 * Round 1 — killed mid-ingestion, mid-stream, mid-run, mid-create (POST /chats with a first message),
 * mid-upload (a PUT still streaming) and right after a knowledge base was deleted; restarted at once (the leases
 * of the work in flight have not lapsed yet: recovery waits for them, which is the realistic worst case).
 * Round 2 — killed 20 s before a minute boundary and kept down across two ticks of an every-minute schedule,
 * with a stream in flight; restarted after the second tick.
 *
 * The state is audited straight from the local D1 file (node:sqlite, read-only) and through the API.
 *
 *   BENCH_CRASH_DOCS=20     documents uploaded around the kill (~150 KB of Markdown each)
 *   BENCH_CRASH_STREAMS=5   chat streams in flight at the kill
 *   BENCH_CRASH_RUNS=3      agent runs (streamed) in flight at the kill
 *   BENCH_CRASH_ROUND2=1    0 skips round 2 (about two and a half minutes)
 *   BENCH_PORT=8795         port for wrangler dev
 */
import type { ChildProcess } from "node:child_process";
import { createWriteStream, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { api, scratchDir, setUpKnowledgeBase, sleep, startServer, uploadAndWait, waitForServer } from "./lib.ts";

const DOCS = Number(process.env.BENCH_CRASH_DOCS ?? 20);
const DOC_KB = 150;
const STREAMS = Number(process.env.BENCH_CRASH_STREAMS ?? 5);
const RUNS = Number(process.env.BENCH_CRASH_RUNS ?? 3);
const ROUND2 = process.env.BENCH_CRASH_ROUND2 !== "0";
const PORT = Number(process.env.BENCH_PORT ?? 8795);
const base = `http://127.0.0.1:${PORT}`;
// Answers stream a word every 100 ms, so a kill lands mid-answer.
const VARS = { LOCAL_MODEL_TOKEN_DELAY_MS: "100" };
const RECOVERY_LIMIT_MS = 120_000;

const stateDir = scratchDir("kb-crash-");
let server: ChildProcess | null = null;

// ---- the service ---------------------------------------------------------------------------------------

async function start(): Promise<number> {
  const t0 = Date.now();
  server = startServer(stateDir, PORT, VARS);
  // BENCH_DEV_LOG=<file>: the dev server's own output, across restarts.
  if (process.env.BENCH_DEV_LOG) {
    const log = createWriteStream(process.env.BENCH_DEV_LOG, { flags: "a" });
    server.stdout?.pipe(log);
    server.stderr?.pipe(log);
  }
  await waitForServer(base, 120_000);
  return Date.now() - t0;
}

async function kill(): Promise<void> {
  const child = server!;
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(-child.pid!, "SIGKILL");
  await Promise.race([exited, sleep(5_000)]);
  server = null;
  await sleep(300);
}

/** The local D1 database, read-only, opened afresh for each query (so it sees the latest commits). */
function q<T = Record<string, unknown>>(sql: string, ...params: Array<string | number | null>): T[] {
  const dir = path.join(stateDir, "v3", "d1", "miniflare-D1DatabaseObject");
  const file = readdirSync(dir).find((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite")!;
  const db = new DatabaseSync(path.join(dir, file), { readOnly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

const one = <T = number>(sql: string, ...params: Array<string | number | null>): T => Object.values(q(sql, ...params)[0] ?? { v: 0 })[0] as T;

// ---- clients ---------------------------------------------------------------------------------------------

type Auth = { cookie: string };

/** A streamed request whose text arrives until the kill; `seen` is what the client got. */
function streamInto(url: string, auth: Auth, body: unknown) {
  const state = { seen: "", chatId: "", runId: "", partials: 0, ended: false };
  const done = (async () => {
    try {
      const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Cookie: auth.cookie }, body: JSON.stringify(body) });
      state.runId = res.headers.get("X-Run-Id") ?? "";
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let i: number;
        while ((i = buffer.indexOf("\n\n")) >= 0) {
          const line = buffer.slice(0, i).split("\n").find((l) => l.startsWith("data: "));
          buffer = buffer.slice(i + 2);
          if (!line) continue;
          const e = JSON.parse(line.slice(6));
          if (e.type === "user_message") state.chatId = e.message.chat_id;
          if (e.type === "final_response" && !e.isComplete) {
            state.seen += e.content;
            state.partials++;
          }
        }
      }
    } catch {
      /* cut by the kill */
    }
    state.ended = true;
  })();
  return { state, done };
}

function markdown(i: number, kb: number): string {
  const parts: string[] = [`# Field notes ${i}`];
  for (let s = 0; parts.join("\n").length < kb * 1024; s++) {
    parts.push(`## Section ${s}\n\nObservation ${s} of notebook ${i}: the okapi number ${i * 1000 + s} browses leaves at dawn, ` +
      `walks ${s % 17} kilometres along the river and rests in the shade of tree ${s % 31}. ` +
      `Keepers record its weight, its diet of buds and fungi, and the weather of day ${s}.`);
  }
  return parts.join("\n\n");
}

async function presign(auth: Auth, kb: { id: string; tenant_id: string }, filename: string, bytes: Uint8Array) {
  return (await api(base, "/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: kb.tenant_id, filename, mime_type: "text/markdown", size_bytes: bytes.byteLength } })).body;
}

// ---- report ----------------------------------------------------------------------------------------------

interface Row {
  what: string;
  inFlight: number;
  stuck: number;
  lost: number;
  doubled: number;
  recoveredMs: number | null;
  note?: string;
}
const rows: Row[] = [];

/**
 * Polls every check (each returns what is still stuck) together until all are 0 or the limit passes; returns,
 * per check, the time after `from` at which it first reached 0 (null: never) and what was still stuck.
 */
async function watch(from: number, checks: Record<string, () => Promise<number> | number>): Promise<Record<string, { ms: number | null; stuck: number }>> {
  const out: Record<string, { ms: number | null; stuck: number }> = {};
  for (const k of Object.keys(checks)) out[k] = { ms: null, stuck: Infinity };
  while (Date.now() - from < RECOVERY_LIMIT_MS) {
    for (const [k, check] of Object.entries(checks)) {
      if (out[k].ms !== null) continue;
      const stuck = await check();
      out[k] = stuck === 0 ? { ms: Date.now() - from, stuck: 0 } : { ms: null, stuck };
    }
    if (Object.values(out).every((r) => r.ms !== null)) break;
    await sleep(250);
  }
  return out;
}

const inList = (ids: string[]) => `(${ids.map((id) => `'${id.replace(/'/g, "")}'`).join(",") || "''"})`;

// ---- round 1 ---------------------------------------------------------------------------------------------

async function round1(auth: Auth, kb: { id: string; tenant_id: string }, tenantId: string, agentId: string) {
  console.log("round 1: setting up a knowledge base to delete, then starting work ...");
  const doomed = (await api(base, "/knowledge-bases", { ...auth, body: { tenant_id: tenantId, name: "doomed" } })).body;
  const doomedDocs: string[] = [];
  for (let i = 0; i < 3; i++) doomedDocs.push(await uploadAndWait(base, auth, doomed, `doomed-${i}.md`, markdown(100 + i, 8)));
  const doomedKeys = q<{ s3_key: string }>(`SELECT s3_key FROM documents WHERE id IN ${inList(doomedDocs)}`).map((r) => r.s3_key);

  // Streams, runs and creates in flight.
  const question = { content: "How much does the okapi walk, what does it eat and how is its weight recorded?", model: "local-extractive", agent_mode: "deep" };
  const chats: string[] = [];
  for (let i = 0; i < STREAMS; i++) {
    const id = crypto.randomUUID();
    await api(base, "/chats", { ...auth, body: { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" } });
    chats.push(id);
  }
  const streams = chats.map((id) => streamInto(`${base}/api/v1/chats/${id}/messages/stream`, auth, question));
  const runs = Array.from({ length: RUNS }, () => streamInto(`${base}/api/v1/agents/${agentId}/messages/stream`, auth, { content: question.content }));
  const creates = Array.from({ length: 2 }, () => ({ id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", agent_mode: "deep", message: question.content }));
  const createCalls = creates.map((body) => fetch(`${base}/api/v1/chats`, { method: "POST", headers: { "Content-Type": "application/json", Cookie: auth.cookie }, body: JSON.stringify(body) }).catch(() => null));

  // An upload still streaming its body.
  const slowBytes = new TextEncoder().encode(markdown(999, 64));
  const slow = await presign(auth, kb, "slow.md", slowBytes);
  const slowBody = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(slowBytes.slice(0, 4096));
      await sleep(60_000);
      controller.close();
    },
  });
  void fetch(slow.upload_url, { method: "PUT", headers: { ...slow.headers, "Content-Length": String(slowBytes.byteLength) }, body: slowBody, duplex: "half" } as RequestInit).catch(() => null);

  // Wait until every stream and run has shown text and every create has an answer being written.
  const t = Date.now();
  while (Date.now() - t < 20_000) {
    const streaming = [...streams, ...runs].every((s) => s.state.partials >= 5);
    const writing = one(`SELECT COUNT(*) FROM chats WHERE id IN ${inList(creates.map((c) => c.id))} AND turn_message_id IS NOT NULL`) === creates.length;
    if (streaming && writing) break;
    await sleep(100);
  }
  // Ingestion: documents uploaded all at once, so the queue has a backlog when the kill comes.
  const docIds: string[] = [];
  const uploads = Promise.all(
    Array.from({ length: DOCS }, async (_, i) => {
      const bytes = new TextEncoder().encode(markdown(i, DOC_KB));
      const p = await presign(auth, kb, `notes-${i}.md`, bytes);
      const put = await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: bytes }).catch(() => null);
      if (put?.ok) docIds.push(p.document_id);
    }),
  ).catch(() => {}); // cut by the kill
  while (docIds.length < Math.ceil(DOCS * 0.6)) await sleep(20);
  // A knowledge base deleted a moment before the crash (its cleanup runs after the response).
  await api(base, `/knowledge-bases/${doomed.id}`, { ...auth, method: "DELETE" });

  const flight = {
    docs: one(`SELECT COUNT(*) FROM documents WHERE id IN ${inList(docIds)} AND status IN ('queued', 'processing')`),
    turns: one(`SELECT COUNT(*) FROM chats WHERE turn_message_id IS NOT NULL`),
    runs: one(`SELECT COUNT(*) FROM agent_runs WHERE status IN ('queued', 'running')`),
    upload: one(`SELECT COUNT(*) FROM documents WHERE id = ? AND upload_claimed_at IS NOT NULL`, slow.document_id),
    cleanup: one(`SELECT COUNT(*) FROM ingest_garbage WHERE knowledge_base_id = ?`, doomed.id) + one(`SELECT COUNT(*) FROM cleanup_tasks WHERE knowledge_base_id = ?`, doomed.id),
  };
  console.log(`killing (SIGKILL of the process group) with in flight: ${JSON.stringify(flight)}`);
  await kill();
  await uploads;
  await Promise.all([...streams.map((s) => s.done), ...runs.map((s) => s.done), ...createCalls]);
  const seen = new Map(streams.map((s) => [s.state.chatId, s.state.seen]));

  const restartMs = await start();
  const upAt = Date.now();
  console.log(`restarted in ${(restartMs / 1000).toFixed(1)} s; waiting for recovery ...`);

  const runIds = runs.map((r) => r.state.runId).filter(Boolean);
  const rec = await watch(upAt, {
    // Documents: every uploaded one ends processed.
    docs: () => one(`SELECT COUNT(*) FROM documents WHERE id IN ${inList(docIds)} AND status IN ('queued', 'processing')`),
    // Streams: each settled with the text it had when the process died.
    turns: () => one(`SELECT COUNT(*) FROM chats WHERE id IN ${inList(chats)} AND turn_message_id IS NOT NULL`),
    // Runs: each in one terminal state.
    runs: () => one(`SELECT COUNT(*) FROM agent_runs WHERE id IN ${inList(runIds)} AND status IN ('queued', 'running')`),
    // The upload cut mid-PUT, retried until accepted.
    upload: async () => ((await fetch(slow.upload_url, { method: "PUT", headers: slow.headers, body: slowBytes })).ok ? 0 : 1),
    // The knowledge base deleted just before the kill: nothing left to remove.
    cleanup: () => one(`SELECT COUNT(*) FROM ingest_garbage WHERE knowledge_base_id = ?`, doomed.id) + one(`SELECT COUNT(*) FROM cleanup_tasks WHERE knowledge_base_id = ?`, doomed.id),
  });
  const docs = rec.docs;
  const docLost = one(`SELECT COUNT(*) FROM documents WHERE id IN ${inList(docIds)} AND status <> 'processed'`) + (docIds.length - one(`SELECT COUNT(*) FROM documents WHERE id IN ${inList(docIds)}`));
  const docDoubled = one(`SELECT COUNT(*) FROM documents d WHERE d.id IN ${inList(docIds)}
    AND d.chunk_count <> (SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id AND c.generation = d.index_generation)`) +
    one(`SELECT COUNT(*) FROM (SELECT parent_document_id FROM documents WHERE parent_document_id IN ${inList(docIds)} GROUP BY parent_document_id HAVING COUNT(*) > 1)`);
  rows.push({ what: "documents (mid-ingestion)", inFlight: flight.docs, stuck: docs.stuck, lost: docLost, doubled: docDoubled, recoveredMs: docs.ms });

  // Streams: each keeps the text it had when the process died, settled and charged once.
  const turns = rec.turns;
  let streamLost = 0;
  let charsLost = 0;
  for (const id of chats) {
    const m = q<{ content: string; credits: number | null }>(`SELECT m.content, (SELECT SUM(credits_used) FROM usage_logs u WHERE u.message_id = m.id) AS credits
      FROM messages m WHERE m.chat_id = ? AND m.role = 'assistant' ORDER BY seq LIMIT 1`, id)[0];
    const client = seen.get(id) ?? "";
    if (!m || (client && !m.content) || !m.credits) streamLost++;
    else charsLost += Math.max(0, client.length - m.content.length);
  }
  rows.push({ what: "streamed answers (mid-stream)", inFlight: STREAMS, stuck: turns.stuck, lost: streamLost, doubled: doubledCharges(chats), recoveredMs: turns.ms, note: `${charsLost} characters shown but not yet checkpointed` });

  // Runs: each ends in one terminal state (failed / interrupted, its output kept).
  const runsDone = rec.runs;
  const runLost = one(`SELECT COUNT(*) FROM agent_runs WHERE id IN ${inList(runIds)} AND (output IS NULL OR output = '') AND status <> 'completed'`) + (RUNS - runIds.length);
  const runChats = q<{ chat_id: string }>(`SELECT chat_id FROM agent_runs WHERE id IN ${inList(runIds)}`).map((r) => r.chat_id);
  rows.push({ what: "agent runs (mid-run)", inFlight: RUNS, stuck: runsDone.stuck, lost: runLost, doubled: doubledCharges(runChats), recoveredMs: runsDone.ms });

  // Creates: the same POST /chats again answers the chat and its (partial) first answer.
  const t1 = Date.now();
  let createLost = 0;
  for (const body of creates) {
    const res = await fetch(`${base}/api/v1/chats`, { method: "POST", headers: { "Content-Type": "application/json", Cookie: auth.cookie }, body: JSON.stringify(body) });
    const r = res.status === 201 ? ((await res.json()) as { assistant_message?: { content?: string } }) : null;
    if (!r?.assistant_message?.content) createLost++;
  }
  rows.push({ what: "POST /chats retried (mid-create)", inFlight: creates.length, stuck: 0, lost: createLost, doubled: doubledCharges(creates.map((c) => c.id)), recoveredMs: Date.now() - t1, note: "time = the two retries, sent once the rest had recovered" });

  const up = rec.upload;
  rows.push({ what: "upload cut mid-PUT (retried)", inFlight: flight.upload, stuck: up.stuck, lost: up.ms === null ? 1 : 0, doubled: 0, recoveredMs: up.ms });

  // Its files gone from the bucket too.
  const clean = rec.cleanup;
  const leftFiles = doomedKeys.filter((k) => !!k).length ? await objectsLeft(doomedKeys) : 0;
  rows.push({ what: "knowledge base deleted before the kill", inFlight: flight.cleanup, stuck: clean.stuck, lost: leftFiles, doubled: 0, recoveredMs: clean.ms, note: `${doomedKeys.length} stored files checked gone` });
}

/** Messages charged more than once, plus any difference between the tenant's counter and its usage log. */
function doubledCharges(chatIds: string[]): number {
  return one(`SELECT COUNT(*) FROM (SELECT message_id FROM usage_logs WHERE chat_id IN ${inList(chatIds)} AND message_id IS NOT NULL GROUP BY message_id HAVING COUNT(*) > 1)`);
}

/** Stored files still in the local R2 bucket (wrangler r2 object get exits non-zero when the object is gone). */
async function objectsLeft(keys: string[]): Promise<number> {
  const { spawnSync } = await import("node:child_process");
  let left = 0;
  for (const key of keys) {
    const r = spawnSync("npx", ["wrangler", "r2", "object", "get", `kb-documents/${key}`, "--local", "--persist-to", stateDir, "--pipe"], {
      cwd: path.join(import.meta.dirname, "../.."),
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      encoding: "utf8",
    });
    if (r.status === 0 && r.stdout.length > 0) left++;
  }
  return left;
}

// ---- round 2 ---------------------------------------------------------------------------------------------

async function round2(auth: Auth, kb: { id: string; tenant_id: string }, tenantId: string) {
  const agent = (await api(base, "/agents", {
    ...auth,
    body: { tenant_id: tenantId, knowledge_base_id: kb.id, name: "every minute", goal: "What does the okapi eat?", model: "local-extractive", agent_mode: "quick", schedule: "* * * * *" },
  })).body;
  // Kill 20 s before a minute boundary, with one run of this schedule behind it.
  const first = Date.parse(agent.schedule.next_run_at);
  let killAt = first + 40_000;
  if (killAt - Date.now() < 5_000) killAt += 60_000;
  console.log(`round 2: every-minute schedule armed for ${agent.schedule.next_run_at}; killing at ${new Date(killAt).toISOString()} ...`);
  await sleep(killAt - Date.now());
  const chatId = crypto.randomUUID();
  await api(base, "/chats", { ...auth, body: { id: chatId, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" } });
  const s = streamInto(`${base}/api/v1/chats/${chatId}/messages/stream`, auth, { content: "What does the okapi eat, and where does it rest?", model: "local-extractive", agent_mode: "deep" });
  while (s.state.partials < 5 && !s.state.ended) await sleep(50);
  const lastBeforeKill = Math.floor(Date.now() / 60_000) * 60_000;
  await kill();
  const tick1 = lastBeforeKill + 60_000;
  const tick2 = lastBeforeKill + 120_000;
  console.log(`down across ${new Date(tick1).toISOString()} and ${new Date(tick2).toISOString()} ...`);
  await sleep(tick2 + 3_000 - Date.now());
  const restartMs = await start();
  const upAt = Date.now();
  console.log(`restarted in ${(restartMs / 1000).toFixed(1)} s; waiting for the schedule to catch up ...`);

  const iso = (ms: number) => new Date(ms).toISOString();
  const rec = await watch(upAt, {
    schedule: () =>
      one(`SELECT COUNT(*) FROM agent_runs WHERE agent_id = ? AND status IN ('queued', 'running')`, agent.id) +
      (one(`SELECT COUNT(*) FROM agent_runs WHERE agent_id = ? AND scheduled_for = ?`, agent.id, iso(tick2)) ? 0 : 1),
    turn: () => one(`SELECT COUNT(*) FROM chats WHERE id = ? AND turn_message_id IS NOT NULL`, chatId),
  });
  const settled = rec.schedule;
  // Every occurrence from the first to the second tick has exactly one record.
  let lost = 0;
  let doubled = 0;
  for (let m = first; m <= tick2; m += 60_000) {
    const n = one(`SELECT COUNT(*) FROM agent_runs WHERE agent_id = ? AND scheduled_for = ?`, agent.id, iso(m));
    if (n === 0) lost++;
    if (n > 1) doubled += n - 1;
  }
  const missed = q<{ status: string; error_code: string | null }>(`SELECT status, error_code FROM agent_runs WHERE agent_id = ? AND scheduled_for = ?`, agent.id, iso(tick1))[0];
  const latest = q<{ status: string }>(`SELECT status FROM agent_runs WHERE agent_id = ? AND scheduled_for = ?`, agent.id, iso(tick2))[0];
  const rule = missed?.error_code === "missed_occurrence" && latest?.status === "completed";
  rows.push({
    what: "schedule down across two ticks",
    inFlight: 2,
    stuck: settled.stuck,
    lost: lost + (rule ? 0 : 1),
    doubled,
    recoveredMs: settled.ms,
    note: `tick 1: ${missed?.status}/${missed?.error_code ?? "-"}, tick 2: ${latest?.status ?? "none"}`,
  });
  const m = q<{ content: string; credits: number | null }>(`SELECT m.content, (SELECT SUM(credits_used) FROM usage_logs u WHERE u.message_id = m.id) AS credits
    FROM messages m WHERE m.chat_id = ? AND m.role = 'assistant'`, chatId)[0];
  rows.push({ what: "streamed answer (round 2)", inFlight: 1, stuck: rec.turn.stuck, lost: m?.content && m.credits ? 0 : 1, doubled: doubledCharges([chatId]), recoveredMs: rec.turn.ms });
}

// ---- main ------------------------------------------------------------------------------------------------

async function main() {
  console.log(`starting wrangler dev on ${base} (state in ${stateDir}) ...`);
  await start();
  try {
    const { cookie, kb, org, tenantId } = await setUpKnowledgeBase(base, "crash");
    const auth = { cookie };
    await api(base, `/billing/organizations/${org.id}/credits`, { cookie, body: { amount: 100_000 } });
    await api(base, `/tenants/${tenantId}`, { cookie, method: "PATCH", body: { credits_pool: 50_000 } });
    await uploadAndWait(base, auth, kb, "okapi.md", markdown(0, 6));
    const agent = (await api(base, "/agents", {
      ...auth,
      body: { tenant_id: tenantId, knowledge_base_id: kb.id, name: "okapi desk", goal: "Answer questions about the okapi notes", model: "local-extractive", agent_mode: "deep" },
    })).body;

    await round1(auth, kb, tenantId, agent.id);
    if (ROUND2) await round2(auth, kb, tenantId);

    // The ledger: the tenant's counter equals its usage log to the micro-credit.
    const ledger = q<{ used: number; logged: number }>(`SELECT t.credits_used AS used, (SELECT COALESCE(SUM(credits_used), 0) FROM usage_logs WHERE tenant_id = t.id) AS logged FROM tenants t WHERE t.id = ?`, tenantId)[0];
    const storage = q<{ used: number; live: number }>(`SELECT t.storage_used_bytes AS used,
      (SELECT COALESCE(SUM(size_bytes), 0) FROM documents WHERE tenant_id = t.id AND parent_document_id IS NULL AND status <> 'deleted') AS live FROM tenants t WHERE t.id = ?`, tenantId)[0];
    const unbilled = one(`SELECT COUNT(*) FROM messages m JOIN chats c ON c.id = m.chat_id WHERE c.tenant_id = ? AND m.role = 'assistant' AND m.content <> ''
      AND NOT EXISTS (SELECT 1 FROM usage_logs u WHERE u.message_id = m.id)`, tenantId);
    rows.push({ what: "credit ledger and storage", inFlight: 0, stuck: 0, lost: unbilled, doubled: Math.abs(ledger.used - ledger.logged) + Math.abs(storage.used - storage.live), recoveredMs: null, note: `credits used ${ledger.used / 1e6}, logged ${ledger.logged / 1e6}; storage ${storage.used} B counted, ${storage.live} B live; ${unbilled} unbilled answers` });
  } finally {
    if (server) await kill();
    rmSync(stateDir, { recursive: true, force: true });
  }

  const w = Math.max(...rows.map((r) => r.what.length));
  const s = (ms: number | null) => (ms === null ? "—" : `${(ms / 1000).toFixed(1)} s`);
  console.log(`\nCrash benchmark (local wrangler dev, SIGKILL of the process group):\n`);
  console.log(`  ${"".padEnd(w)}  in flight  stuck  lost  doubled  recovered after restart`);
  for (const r of rows) {
    console.log(`  ${r.what.padEnd(w)}  ${String(r.inFlight).padStart(9)}  ${String(r.stuck).padStart(5)}  ${String(r.lost).padStart(4)}  ${String(r.doubled).padStart(7)}  ${s(r.recoveredMs).padStart(8)}${r.note ? `   (${r.note})` : ""}`);
  }
  const worst = Math.max(...rows.map((r) => r.recoveredMs ?? 0));
  const bad = rows.reduce((n, r) => n + r.stuck + r.lost + r.doubled, 0);
  console.log(`\n  stuck + lost + doubled: ${bad}; slowest recovery: ${s(worst)} after the restart\n`);
  if (bad) process.exitCode = 1;
}

main().catch(async (e) => {
  console.error(e);
  if (server) await kill().catch(() => {});
  rmSync(stateDir, { recursive: true, force: true });
  process.exit(1);
});

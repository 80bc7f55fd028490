/**
 * `npm run bench:agents`: many agents with every-minute schedules under a local
 * `wrangler dev`, for a few minutes. The schedule is driven by each agent's
 * Durable Object alarm (alarms fire by themselves under wrangler dev); the
 * minute Cron Trigger (the safety net) does not fire by itself in dev, so the
 * benchmark pokes it each minute through /cdn-cgi/local/scheduled, racing the
 * alarms as a duplicate trigger would. Prints occurrences due, runs started,
 * duplicates (must be 0), misses and the start delay after the scheduled time.
 *
 *   BENCH_AGENTS=100     scheduled agents
 *   BENCH_MINUTES=5      how long the schedules run
 *   BENCH_PORT=8794      port for wrangler dev
 */
import { api, pct, setUpKnowledgeBase, sleep, startDevServer, uploadAndWait } from "./lib.ts";

const AGENTS = Number(process.env.BENCH_AGENTS ?? 100);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 5);
const PORT = Number(process.env.BENCH_PORT ?? 8794);

interface Run {
  id: string;
  status: string;
  trigger: string;
  scheduled_for: string | null;
  started_at: string | null;
  ended_at: string | null;
  error: { code: string } | null;
}

async function main() {
  console.log(`starting wrangler dev on 127.0.0.1:${PORT} ...`);
  const server = await startDevServer({ port: PORT });
  const base = server.base;
  try {
    const { cookie, kb, org, tenantId } = await setUpKnowledgeBase(base, "agentsbench");
    await api(base, `/billing/organizations/${org.id}/credits`, { cookie, body: { amount: 100_000 } });
    await api(base, `/tenants/${tenantId}`, { cookie, method: "PATCH", body: { credits_pool: 50_000 } });
    await uploadAndWait(base, { cookie }, kb, "handbook.md", "# Handbook\n\nRefunds are paid within 5 business days of the request.\n");

    console.log(`creating ${AGENTS} agents with schedule "* * * * *" ...`);
    const agents: Array<{ id: string; first: string }> = [];
    for (let i = 0; i < AGENTS; i++) {
      const a = (
        await api(base, "/agents", {
          cookie,
          body: {
            tenant_id: tenantId,
            knowledge_base_id: kb.id,
            name: `bench-${i}`,
            goal: "How fast are refunds paid?",
            model: "local-extractive",
            agent_mode: "quick",
            schedule: "* * * * *",
          },
        })
      ).body;
      agents.push({ id: a.id, first: a.schedule.next_run_at });
    }
    // The window: every occurrence from each agent's first one up to the end is due.
    const firstMinute = Math.min(...agents.map((a) => Date.parse(a.first)));
    const end = firstMinute + (MINUTES - 1) * 60_000;
    console.log(`schedules armed; first occurrence ${new Date(firstMinute).toISOString()}, last counted ${new Date(end).toISOString()}`);

    // Poke the minute cron a second after each boundary (the safety net racing the alarms).
    let pokes = 0;
    while (Date.now() < end + 45_000) {
      const nextBoundary = Math.ceil((Date.now() + 1) / 60_000) * 60_000 + 1_000;
      if (nextBoundary > end + 45_000) break;
      await sleep(nextBoundary - Date.now());
      const r = await fetch(`${base}/cdn-cgi/local/scheduled?cron=${encodeURIComponent("* * * * *")}`);
      if (r.ok) pokes++;
    }
    await sleep(Math.max(0, end + 60_000 - Date.now()));

    // Stop the schedules, then read every run.
    for (const a of agents) await api(base, `/agents/${a.id}/schedule`, { cookie, method: "PATCH", body: { enabled: false } });
    let due = 0;
    let started = 0;
    let duplicates = 0;
    let misses = 0;
    const statuses: Record<string, number> = {};
    const delays: number[] = [];
    for (const a of agents) {
      const runs = (await api(base, `/agents/${a.id}/runs?limit=100`, { cookie })).body.runs as Run[];
      const scheduled = runs.filter((r) => r.trigger === "schedule" && r.scheduled_for && Date.parse(r.scheduled_for) <= end);
      const occurrences: number[] = [];
      for (let t = Date.parse(a.first); t <= end; t += 60_000) occurrences.push(t);
      due += occurrences.length;
      const byOccurrence = new Map<number, Run[]>();
      for (const r of scheduled) {
        const k = Date.parse(r.scheduled_for!);
        byOccurrence.set(k, [...(byOccurrence.get(k) ?? []), r]);
      }
      for (const t of occurrences) {
        const rs = byOccurrence.get(t) ?? [];
        if (rs.length > 1) duplicates += rs.length - 1;
        const ran = rs.filter((r) => r.started_at && r.error?.code !== "missed_occurrence");
        if (!ran.length) {
          misses++;
          continue;
        }
        started++;
        statuses[ran[0].status] = (statuses[ran[0].status] ?? 0) + 1;
        delays.push(Date.parse(ran[0].started_at!) - t);
      }
    }
    console.log("");
    console.log(`agents                   ${AGENTS}`);
    console.log(`window                   ${MINUTES} min (${new Date(firstMinute).toISOString()} .. ${new Date(end).toISOString()})`);
    console.log(`cron pokes (safety net)  ${pokes}`);
    console.log(`occurrences due          ${due}`);
    console.log(`runs started             ${started}`);
    console.log(`duplicates               ${duplicates}`);
    console.log(`misses                   ${misses}`);
    console.log(`run statuses             ${JSON.stringify(statuses)}`);
    console.log(`start delay p50 / p95    ${pct(delays, 50)} ms / ${pct(delays, 95)} ms (max ${Math.max(...delays)} ms)`);
    if (duplicates > 0) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

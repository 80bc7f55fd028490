import { and, desc, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import type { TurnCommand, TurnOutcome } from "../../contracts/chat-session";
import type { Database } from "../../db/client";
import { agentRuns, chats, usageLogs, type Agent, type AgentRun, type Chat, type KnowledgeBase, type RunStatus, type RunTrigger, type RunUsage, type Skill } from "../../db/schema";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { Actor } from "../billing/metering";
import { newChatRow, seedInserts, type NewChat } from "../chats/chats";
import type { BatchItem } from "drizzle-orm/batch";
import { isUniqueViolation } from "../../db/errors";
import { conflict } from "../../lib/errors";
import { emptyToolSettings } from "../../contracts/tools";
import { pageOf } from "../../db/page";
import { leaseUntil } from "../recovery/leases";
import { buildSnapshot, snapshotOf } from "./snapshot";
import { runOwnerSeenBy, type RunViewer } from "../../contracts/access";

export type { RunViewer };

/**
 * Runs: one execution of an agent's pinned snapshot, through the chat's
 * Durable Object exactly like a chat turn (operation `agent_run`). A run ends
 * in exactly one of completed / failed / cancelled (`finishRun` only moves a
 * run that is still queued or running).
 */

export function publicRun(r: AgentRun) {
  return {
    id: r.id,
    agent_id: r.agentId,
    agentVersion: r.agentVersion,
    status: r.status,
    trigger: r.trigger,
    scheduled_for: r.scheduledFor,
    chat_id: r.chatId,
    parent_run_id: r.parentRunId,
    error: r.errorCode ? { code: r.errorCode, message: r.errorMessage ?? "" } : null,
    usage: r.usage ?? null,
    output: r.output ?? null,
    message_id: r.messageId,
    snapshot: r.snapshot ?? null,
    started_at: r.startedAt,
    ended_at: r.endedAt,
    created_at: r.createdAt,
  };
}

export type PublicRun = ReturnType<typeof publicRun>;

export async function getRun(db: Database, id: string): Promise<AgentRun | undefined> {
  return db.select().from(agentRuns).where(eq(agentRuns.id, id)).get();
}

/** Whose runs a caller sees: the one rule of src/contracts/access.ts (REST run routes and A2A task methods alike). */
function visibleTo(viewer: RunViewer): SQL {
  return sql`(${agentRuns.owner} IS NULL OR ${agentRuns.owner} = ${runOwnerSeenBy(viewer)})`;
}

/** A run of `agentId` that `viewer` may see, or undefined (missing, another agent's, or someone else's). */
export async function visibleRun(db: Database, agentId: string, runId: string, viewer: RunViewer): Promise<AgentRun | undefined> {
  if (!runId) return undefined;
  return db.select().from(agentRuns).where(and(eq(agentRuns.id, runId), eq(agentRuns.agentId, agentId), visibleTo(viewer))).get();
}

export async function listRuns(db: Database, agentId: string, opts: { status?: RunStatus; limit: number; offset: number; viewer: RunViewer }) {
  const where = and(eq(agentRuns.agentId, agentId), visibleTo(opts.viewer), opts.status ? eq(agentRuns.status, opts.status) : undefined);
  return pageOf(db, agentRuns, where, [desc(agentRuns.createdAt), desc(agentRuns.id)], opts);
}

/** The agent a chat was created for (chats made by runs carry it in their settings). */
export const chatAgentId = (chat: Chat): string | null => ((chat.settings ?? {}) as { agent_id?: string }).agent_id ?? null;

export interface StartRun {
  agent: Agent;
  kb: KnowledgeBase;
  trigger: RunTrigger;
  content: string;
  actor: Actor;
  subject: string;
  /** An existing chat of this agent, or null for a new one. */
  chat: Chat | null;
  owner: { userId: string | null; apiKeyId: string | null; externalSubjectId: string | null };
  parentRunId?: string | null;
  scheduledFor?: string | null;
  /** An already-claimed occurrence row (scheduled runs). */
  runId?: string;
  depth?: number;
  stream: boolean;
  /** The earlier messages of a conversation the client holds (OpenAI-compatible calls): written into a new chat as its history. */
  history?: Array<{ role: "user" | "assistant"; content: string }>;
}

type Snapshot = Awaited<ReturnType<typeof buildSnapshot>>;

/** What the caller read with its own checks, in its one batch (./run-reads.ts): saves the run its reads. */
export interface RunReads {
  /** The agent's skills (`skillsOfAgent`). */
  skills: Skill[];
  /** Where the continued chat's transcript ends (its last `seq`, its number of messages). */
  transcript?: { maxSeq: number; count: number };
  /** Whether the knowledge base has a data file (the toolbox's `sql__query`). */
  tabular: boolean;
}

/**
 * Creates the run (running) and its chat if needed, in one batch; returns the command that runs it in the chat's
 * DO. The command carries the chat and where its transcript ends when they are known (a new chat without history:
 * it was just written; a continued one: read by the caller), so the chat's Durable Object reads neither again.
 */
export async function startRun(db: Database, s: StartRun & { reads?: RunReads }): Promise<{ run: AgentRun; chat: Chat; cmd: TurnCommand }> {
  const snapshot = s.reads ? snapshotOf(s.agent, s.content, s.reads.skills) : await buildSnapshot(db, s.agent, s.content);
  const chat = s.chat ?? newChatRow(runChatInput(s, snapshot));
  const seeded = s.chat ? [] : (s.history ?? []);
  const record = recordRun(db, s, snapshot, chat);
  const writes: BatchItem<"sqlite">[] = s.chat ? [] : [db.insert(chats).values(chat), ...seedInserts(db, chat.id, seeded)];
  let results: unknown[];
  try {
    // In order: the chat, its seeded history, then the run (which names the chat).
    const items: BatchItem<"sqlite">[] = [...writes, record.write];
    results = await db.batch(items as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  } catch (e) {
    if (!s.chat && isUniqueViolation(e)) throw conflict("conflict", `A chat with id ${chat.id} already exists`);
    throw e;
  }
  const run = record.row ?? (results.at(-1) as AgentRun[])[0];
  // Known: a continued chat's end as the caller read it; a new chat's, empty. A seeded chat is left for the object
  // to read (the inserts moved its row's message count and last message time).
  const transcript = s.chat ? s.reads?.transcript : seeded.length ? undefined : { maxSeq: 0, count: 0 };
  const known = transcript ? { chat, transcript } : {};
  return { run, chat, cmd: { ...runCommand(s, snapshot, run, chat), ...known, ...(s.reads ? { tabular: s.reads.tabular } : {}) } };
}

/** SQL: a run in flight whose worker is gone — its own lease lapsed and its chat has no live turn. */
export const runLeaseLapsed = (at: string) => sql`
  ${agentRuns.status} IN ('queued', 'running')
  AND COALESCE(${agentRuns.leaseExpiresAt}, strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(${agentRuns.startedAt}, ${agentRuns.createdAt}), '+30 seconds')) < ${at}
  AND NOT EXISTS (SELECT 1 FROM chats c WHERE c.id = ${agentRuns.chatId} AND c.turn_lease_expires_at >= ${at})`;

function runChatInput(s: StartRun, snapshot: Snapshot): NewChat {
  return {
    id: crypto.randomUUID(),
    kb: s.kb,
    model: snapshot.model,
    title: `${s.agent.config.name}: ${s.content.replace(/\s+/g, " ").trim().slice(0, 80)}`,
    ownerUserId: s.owner.userId,
    apiKeyId: s.owner.apiKeyId,
    externalSubjectId: s.owner.externalSubjectId,
    agentMode: snapshot.agent_mode,
    // Ties the chat to its agent: later runs may continue it, other agents may not.
    settings: { websearch_enable: snapshot.tools.websearch_enable, agent_id: s.agent.id } as Chat["settings"],
  };
}

/** The run row's write, running: a claimed occurrence (scheduled runs) is updated (the row comes back), anything else inserted. */
function recordRun(db: Database, s: StartRun, snapshot: Snapshot, chat: Chat): { write: BatchItem<"sqlite">; row: AgentRun | null } {
  const at = nowIso();
  const owner = s.owner.userId ? `user:${s.owner.userId}` : "app";
  if (s.runId) {
    const write = db
      .update(agentRuns)
      .set({ status: "running", chatId: chat.id, owner, snapshot, agentVersion: s.agent.agentVersion, startedAt: at, leaseExpiresAt: leaseUntil(Date.parse(at)) })
      .where(eq(agentRuns.id, s.runId))
      .returning();
    return { write, row: null };
  }
  const run: AgentRun = {
    id: newId("run"),
    agentId: s.agent.id,
    organizationId: s.agent.organizationId,
    tenantId: s.agent.tenantId,
    agentVersion: s.agent.agentVersion,
    status: "running",
    trigger: s.trigger,
    scheduledFor: s.scheduledFor ?? null,
    chatId: chat.id,
    owner,
    parentRunId: s.parentRunId ?? null,
    errorCode: null,
    errorMessage: null,
    usage: null,
    snapshot,
    output: null,
    messageId: null,
    startedAt: at,
    endedAt: null,
    createdAt: at,
    // Held until the run's turn takes over with its own lease (see settleLapsedRuns).
    leaseExpiresAt: leaseUntil(Date.parse(at)),
  };
  return { write: db.insert(agentRuns).values(run), row: run };
}

/** The turn of the run: the version's goal and instructions, `always` skills loaded, its tools (no delegates at depth 1). */
function runCommand(s: StartRun, snapshot: Snapshot, run: AgentRun, chat: Chat): TurnCommand {
  const always = snapshot.skills.filter((sk) => sk.loaded);
  const auto = snapshot.skills.filter((sk) => !sk.loaded && sk.mode === "auto");
  const instructions = [`Goal: ${snapshot.goal}`, snapshot.instructions ? `Instructions:\n${snapshot.instructions}` : null].filter(Boolean).join("\n\n");
  return {
    chatId: chat.id,
    kb: s.kb,
    content: s.content,
    modelId: snapshot.model,
    mode: snapshot.agent_mode,
    websearch: snapshot.tools.websearch_enable,
    actor: s.actor,
    operation: "agent_run",
    stream: s.stream,
    subject: s.subject,
    instructions,
    runId: run.id,
    depth: s.depth ?? 0,
    skills: always.map((sk) => ({ name: sk.name, body: sk.body })),
    toolSettings: {
      ...emptyToolSettings(),
      websearch: snapshot.tools.websearch_enable,
      mcpServerIds: snapshot.tools.mcp_server_ids,
      connectorSlugs: snapshot.tools.connector_slugs,
      delegateIds: (s.depth ?? 0) >= 1 ? [] : [...snapshot.tools.delegate_agent_ids, ...snapshot.tools.a2a_agent_ids],
      autoSkills: auto.map((sk) => ({ id: sk.skill_id, name: sk.name, description: sk.description, body: sk.body })),
    },
  };
}

export interface TurnEnd {
  status: "complete" | "partial" | "error";
  stopReason?: "stopped" | "replaced" | "disconnected" | "interrupted";
  error?: { code: string; message: string } | null;
  usage: RunUsage | null;
  messageId: string | null;
  content: string | null;
}

/** Maps a turn's end to the run's one terminal state. */
export function terminalOf(end: TurnEnd): { status: RunStatus; error: { code: string; message: string } | null } {
  if (end.status === "complete") return { status: "completed", error: null };
  if (end.status === "partial" && end.stopReason === "stopped") return { status: "cancelled", error: null };
  if (end.status === "partial") {
    if (end.stopReason === "replaced") {
      return { status: "failed", error: { code: "replaced", message: "A newer turn on the same chat replaced this run before its final answer" } };
    }
    if (end.stopReason === "interrupted") {
      return { status: "failed", error: { code: "interrupted", message: "The run was interrupted before its final answer (the service stopped while it ran); its partial output is kept" } };
    }
    return { status: "failed", error: { code: "interrupted", message: "The run ended before a final answer (the client disconnected)" } };
  }
  return { status: "failed", error: { code: end.error?.code ?? "internal_error", message: end.error?.message ?? "The run failed" } };
}

/**
 * Records the end of a run: usage, output and message always (also when the
 * run was already cancelled by a stop), the status only when still in flight.
 * Usage logs of the turn get the run's id. Idempotent.
 */
export async function finishRun(db: Database, runId: string, end: TurnEnd): Promise<AgentRun | undefined> {
  // One round trip: the writes, then the run as they left it, in one batch (README "Latency").
  const { finish, logs, read } = finishRunQueries(db, runId, end);
  const results = await db.batch([finish, ...logs, read]);
  return (results[results.length - 1] as AgentRun[])[0];
}

/**
 * finishRun's statements: the writes, and the run read back after them (in the same batch). A turn's final write
 * takes them into its own batch (src/services/agents/hook.ts, batchStatement).
 */
export function finishRunQueries(db: Database, runId: string, end: TurnEnd) {
  const t = terminalOf(end);
  const at = nowIso();
  // The status and the error move only while the run is in flight; usage, output and message are kept if unsent.
  const inFlight = sql`${agentRuns.status} IN ('queued', 'running')`;
  const finish = db
    .update(agentRuns)
    .set({
      errorCode: sql`CASE WHEN ${inFlight} THEN ${t.error?.code ?? null} ELSE ${agentRuns.errorCode} END`,
      errorMessage: sql`CASE WHEN ${inFlight} THEN ${t.error?.message ?? null} ELSE ${agentRuns.errorMessage} END`,
      status: sql`CASE WHEN ${inFlight} THEN ${t.status} ELSE ${agentRuns.status} END`,
      usage: sql`COALESCE(${end.usage ? JSON.stringify(end.usage) : null}, ${agentRuns.usage})`,
      output: sql`COALESCE(${end.content}, ${agentRuns.output})`,
      messageId: sql`COALESCE(${end.messageId}, ${agentRuns.messageId})`,
      endedAt: sql`COALESCE(${agentRuns.endedAt}, ${at})`,
    })
    .where(eq(agentRuns.id, runId));
  const read = db.select().from(agentRuns).where(eq(agentRuns.id, runId));
  const logs = end.messageId
    ? [db.update(usageLogs).set({ agentRunId: runId }).where(and(eq(usageLogs.messageId, end.messageId), isNull(usageLogs.agentRunId)))]
    : [];
  return { finish, logs, read };
}

/** A run that never reached the model (identity revoked, no credits, missed): failed with the reason. */
export async function failRun(db: Database, runId: string, code: string, message: string): Promise<void> {
  const at = nowIso();
  await db
    .update(agentRuns)
    .set({ status: "failed", errorCode: code, errorMessage: message, startedAt: sql`COALESCE(${agentRuns.startedAt}, ${at})`, endedAt: at })
    .where(and(eq(agentRuns.id, runId), inArray(agentRuns.status, ["queued", "running"])));
}

/** Stop: an in-flight run becomes cancelled at once (the turn then saves its partial output into it). */
export async function cancelRun(db: Database, runId: string): Promise<boolean> {
  const at = nowIso();
  const r = await db
    .update(agentRuns)
    .set({ status: "cancelled", endedAt: at })
    .where(and(eq(agentRuns.id, runId), inArray(agentRuns.status, ["queued", "running"])))
    .returning({ id: agentRuns.id })
    .all();
  return r.length > 0;
}

/** The end of a JSON turn as the DO answered it. */
export function endOfOutcome(o: TurnOutcome): TurnEnd {
  return {
    status: o.status,
    error: o.error ? { code: o.error.code, message: o.error.message } : null,
    usage: o.usage,
    messageId: o.assistant_message.id,
    content: o.assistant_message.content,
  };
}

import { and, eq, sql, type SQL } from "drizzle-orm";
import { loadAuthorized } from "../../auth/load";
import type { Permission } from "../../auth/permissions";
import type { ServiceContext } from "../../contracts/context";
import type { Database } from "../../db/client";
import { agents, chats, documents, knowledgeBases, messages, skills, tenants, type Agent, type Chat, type KnowledgeBase, type Skill } from "../../db/schema";
import { tabularDocumentWhere } from "../tables/service";
import { agentScope } from "./agents";
import type { RunReads } from "./runs";
import { skillsOfAgent } from "./snapshot";

/**
 * Everything a run started by a caller (POST /agents/:id/messages, A2A `SendMessage`) reads before it starts, in
 * ONE D1 round trip (README "Latency"): the continued chat and where its transcript ends, the agent's knowledge
 * base, its tenant's credits, whether the knowledge base has a data file and the agent's skills. The checks that
 * use them are the caller's, in its own order; the transcript's end, the data-file answer and the skills travel
 * with the run (startRun's `reads`), so neither the run nor its chat's Durable Object reads them again.
 */
export interface RunState {
  /** The chat id the state was read for ("" for none). */
  chatId: string;
  chat: Chat | null;
  kb: KnowledgeBase | undefined;
  tenant: { pool: number; used: number } | undefined;
  reads: RunReads;
}

/** The statements of a run's state; the agent's columns are values, or sub-selects when the agent is read alongside. */
function stateReads(db: Database, chatId: string, of: { kb: string | SQL; tenant: string | SQL }, skillsRead: ReturnType<typeof skillsOfAgent>) {
  return [
    db.select().from(chats).where(eq(chats.id, chatId)),
    db.select({ maxSeq: sql<number>`COALESCE(MAX(${messages.seq}), 0)`, count: sql<number>`COUNT(*)` }).from(messages).where(eq(messages.chatId, chatId)),
    db.select().from(knowledgeBases).where(eq(knowledgeBases.id, of.kb)),
    db.select({ pool: tenants.creditsPool, used: tenants.creditsUsed }).from(tenants).where(eq(tenants.id, of.tenant)),
    db.select({ n: sql<number>`1` }).from(documents).where(tabularDocumentWhere(of.kb)).limit(1),
    // An agent without skills reads none (a statement that matches nothing keeps the batch's shape).
    skillsRead ?? db.select().from(skills).where(sql`0`),
  ] as const;
}

type StateRows = readonly [Chat[], Array<{ maxSeq: number; count: number }>, KnowledgeBase[], Array<{ pool: number; used: number }>, unknown[], Skill[]];

function stateOf(chatId: string, [chatRows, transcriptRows, kbRows, tenantRows, tabularRows, skillRows]: StateRows): RunState {
  return {
    chatId,
    chat: chatId ? (chatRows[0] ?? null) : null,
    kb: kbRows[0],
    tenant: tenantRows[0],
    reads: {
      skills: skillRows,
      transcript: chatId ? { maxSeq: Number(transcriptRows[0]?.maxSeq ?? 0), count: Number(transcriptRows[0]?.count ?? 0) } : undefined,
      tabular: tabularRows.length > 0,
    },
  };
}

/** The run state of a loaded agent, in one batch. */
export async function readRunState(db: Database, agent: Agent, chatId: string | null | undefined): Promise<RunState> {
  const id = chatId?.toLowerCase() ?? "";
  const rows = await db.batch(stateReads(db, id, { kb: agent.knowledgeBaseId, tenant: agent.tenantId }, skillsOfAgent(db, agent)));
  return stateOf(id, rows);
}

/**
 * `agentFor` and `readRunState` in ONE round trip: the agent and its run state read together (the state through
 * the agent's row inside the statements), the agent authorized before anything of the state is used.
 */
export async function agentWithRunState(ctx: ServiceContext, agentId: string, permission: Permission, chatId: string | null): Promise<{ agent: Agent; state: RunState }> {
  const db = ctx.db;
  const id = chatId?.toLowerCase() ?? "";
  const ofAgent = (column: "knowledge_base_id" | "tenant_id") => sql`(SELECT ${sql.raw(column)} FROM agents WHERE id = ${agentId})`;
  // The agent's skills: those its configuration names, of its tenant, active (as skillsOfAgent reads them).
  const skillIds = sql`(SELECT json_extract(value, '$.skill_id') FROM json_each((SELECT config FROM agents WHERE id = ${agentId}), '$.skills'))`;
  const skillsRead = db.select().from(skills).where(and(eq(skills.tenantId, ofAgent("tenant_id")), eq(skills.status, "active"), sql`${skills.id} IN ${skillIds}`));
  const [agentRows, ...rows] = await db.batch([
    db.select().from(agents).where(eq(agents.id, agentId)),
    ...stateReads(db, id, { kb: ofAgent("knowledge_base_id"), tenant: ofAgent("tenant_id") }, skillsRead),
  ]);
  const { row: agent } = await loadAuthorized(ctx, permission, agentRows[0], (a) => agentScope(a)!, { what: "Agent" });
  return { agent, state: stateOf(id, rows) };
}

import { eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { chats, documents, knowledgeBases, messages, skills, tenants, type Agent } from "../../db/schema";
import { tabularDocumentWhere } from "../tables/service";
import { skillsOfAgent } from "./snapshot";

/**
 * Everything a run started by a caller (POST /agents/:id/messages, A2A `SendMessage`) reads before it starts, in
 * ONE D1 round trip (README "Latency"): the continued chat and where its transcript ends, the agent's knowledge
 * base, its tenant's credits, whether the knowledge base has a data file and the agent's skills. The checks that
 * use them are the caller's, in its own order; the transcript's end, the data-file answer and the skills travel
 * with the run (startRun's `reads`), so neither the run nor its chat's Durable Object reads them again.
 */
export async function readRunState(db: Database, agent: Agent, chatId: string | null | undefined) {
  const id = chatId?.toLowerCase() ?? "";
  const [chatRows, transcriptRows, kbRows, tenantRows, tabularRows, skillRows] = await db.batch([
    db.select().from(chats).where(eq(chats.id, id)),
    db.select({ maxSeq: sql<number>`COALESCE(MAX(${messages.seq}), 0)`, count: sql<number>`COUNT(*)` }).from(messages).where(eq(messages.chatId, id)),
    db.select().from(knowledgeBases).where(eq(knowledgeBases.id, agent.knowledgeBaseId)),
    db.select({ pool: tenants.creditsPool, used: tenants.creditsUsed }).from(tenants).where(eq(tenants.id, agent.tenantId)),
    db.select({ n: sql<number>`1` }).from(documents).where(tabularDocumentWhere(agent.knowledgeBaseId)).limit(1),
    // An agent without skills reads none (a statement that matches nothing keeps the batch's shape).
    skillsOfAgent(db, agent) ?? db.select().from(skills).where(sql`0`),
  ]);
  return {
    chat: id ? (chatRows[0] ?? null) : null,
    kb: kbRows[0],
    tenant: tenantRows[0],
    reads: {
      skills: skillRows,
      transcript: id ? { maxSeq: Number(transcriptRows[0]?.maxSeq ?? 0), count: Number(transcriptRows[0]?.count ?? 0) } : undefined,
      tabular: tabularRows.length > 0,
    },
  };
}

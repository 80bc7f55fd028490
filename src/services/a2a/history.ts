import { and, asc, eq, sql } from "drizzle-orm";
import type { Message as A2aMessage } from "@a2a-js/sdk";
import type { Database } from "../../db/client";
import { messages, type AgentRun } from "../../db/schema";
import { ROLE_AGENT, ROLE_USER, textPart } from "./protocol";

/** A task's history, the most recent last: more than this is never returned (a run has one question and one answer). */
const MAX_HISTORY = 100;

/**
 * The history of a task (= run): the messages of the run's chat that belong to the run — its
 * question and its answer, both marked with the run's id when the turn wrote them — as A2A
 * messages, cut to `historyLength` as the SDK's request handler does (absent: all; 0 or less: none;
 * N: the N most recent).
 */
export async function taskHistory(db: Database, run: AgentRun, historyLength: number | undefined): Promise<A2aMessage[]> {
  if (!run.chatId || (historyLength !== undefined && historyLength <= 0)) return [];
  const rows = await db
    .select({ id: messages.id, role: messages.role, content: messages.content })
    .from(messages)
    .where(and(eq(messages.chatId, run.chatId), sql`json_extract(${messages.metadata}, '$.run_id') = ${run.id}`))
    .orderBy(asc(messages.seq))
    .limit(MAX_HISTORY)
    .all();
  const history = rows.map(
    (m): A2aMessage => ({
      messageId: m.id,
      contextId: run.chatId ?? "",
      taskId: run.id,
      role: (m.role === "user" ? ROLE_USER : ROLE_AGENT) as A2aMessage["role"],
      parts: [textPart(m.content)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    }),
  );
  return historyLength === undefined ? history : history.slice(-historyLength);
}

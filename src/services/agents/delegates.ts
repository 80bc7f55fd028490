import { eq } from "drizzle-orm";
import { knowledgeBases, tenants, type Agent } from "../../db/schema";
import { getAgent } from "./agents";
import { executeRunJson } from "./execute";
import { cancelRun, startRun } from "./runs";
import { stopTurn } from "../chats/session";
import type { DelegateResolver, DelegationOrigin } from "../delegation/types";
import { delegationAllowed } from "../../contracts/access";

/**
 * Our own agents as delegates (`agt_…`): an active agent that is not the caller itself, inside the
 * caller's reach by the one rule of src/contracts/access.ts (the same tenant; the same knowledge base or one
 * open to inbound delegation). Checked when configured and again at call time.
 */
async function usable(origin: DelegationOrigin, id: string): Promise<Agent | null> {
  const agent = await getAgent(origin.db, id);
  if (!agent || agent.status !== "active") return null;
  if (origin.agentId && agent.id === origin.agentId) return null;
  const kb = await origin.db
    .select({ inbound: knowledgeBases.inboundDelegationEnabled })
    .from(knowledgeBases)
    .where(eq(knowledgeBases.id, agent.knowledgeBaseId))
    .get();
  if (!kb) return null;
  return delegationAllowed(origin, agent, kb.inbound) ? agent : null;
}

export const agentDelegates: DelegateResolver = {
  prefix: "agt_",
  async resolve(origin, id) {
    const a = await usable(origin, id);
    return a ? { id: a.id, name: a.config.name, description: a.config.description ?? a.config.goal } : null;
  },
  async delegate(origin, id, call) {
    const fail = (text: string) => ({
      passage: { document_id: null, filename: `Agent ${id}`, chunk_id: null, text, score: 0, page: null, url: null },
      delegatedAgentId: id,
      isError: true,
      text,
    });
    if (origin.depth >= 1) return fail("A delegate cannot delegate further (one hop).");
    const agent = await usable(origin, id);
    if (!agent) return fail("This agent is not available for delegation (archived, in another tenant, or its knowledge base does not accept inbound delegation).");
    const kb = await origin.db.select().from(knowledgeBases).where(eq(knowledgeBases.id, agent.knowledgeBaseId)).get();
    if (!kb || kb.status !== "active") return fail("The delegate's knowledge base is inactive.");
    // Metered to the delegate's own tenant: refuse before any work when it has nothing left.
    const t = await origin.db.select({ pool: tenants.creditsPool, used: tenants.creditsUsed }).from(tenants).where(eq(tenants.id, agent.tenantId)).get();
    if (!t || t.pool - t.used <= 0) return fail("The delegate's tenant has no available credits.");
    const { cmd, run } = await startRun(origin.db, {
      agent,
      kb,
      trigger: "delegation",
      content: call.question,
      actor: call.actor,
      subject: `agent:${origin.agentId ?? "chat"}`,
      chat: null,
      owner: { userId: call.actor.userId ?? null, apiKeyId: call.actor.apiKeyId ?? null, externalSubjectId: null },
      parentRunId: call.parentRunId,
      depth: 1,
      stream: false,
    });
    // Stopping the caller's turn stops the delegate's run too (it ends cancelled with its partial output).
    const onAbort = () => {
      void cancelRun(origin.db, run.id)
        .then((was) => (was ? stopTurn(origin.env, cmd.chatId) : false))
        .catch(() => {});
    };
    call.signal.addEventListener("abort", onAbort, { once: true });
    let outcome, done;
    try {
      ({ outcome, run: done } = await executeRunJson(origin.env, origin.db, cmd));
    } finally {
      call.signal.removeEventListener("abort", onAbort);
    }
    const text = outcome.assistant_message.content;
    return {
      passage: { document_id: null, filename: `Agent: ${agent.config.name}`, chunk_id: null, text: text || "(no answer)", score: 1, page: null, url: null },
      delegatedAgentId: agent.id,
      runId: run.id,
      isError: done.status !== "completed",
    };
  },
};

import { badRequest, type ErrorDetail } from "../../lib/errors";
import type { Tool, ToolProvider, TurnScope, ValidationScope } from "../../contracts/tools";
import { resolverFor, type DelegationOrigin } from "./types";


const agentIdOf = (settings: unknown): string | null => ((settings ?? {}) as { agent_id?: string }).agent_id ?? null;

function originOf(scope: ValidationScope | TurnScope): DelegationOrigin {
  const c = scope.chat;
  const agentId = (scope as { agentId?: string | null }).agentId ?? ("settings" in c ? agentIdOf((c as { settings?: unknown }).settings) : null);
  return {
    db: scope.db,
    env: scope.env,
    organizationId: c.organizationId,
    environmentId: c.environmentId,
    tenantId: c.tenantId,
    knowledgeBaseId: c.knowledgeBaseId,
    agentId,
    depth: scope.depth,
  };
}

const pathOf = (id: string, i: number, agentConfig: boolean, settings: string[]) =>
  agentConfig && id.startsWith("a2a_")
    ? `body.a2a_agent_ids.${settings.filter((x) => x.startsWith("a2a_")).indexOf(id)}`
    : agentConfig
      ? `body.delegate_agent_ids.${settings.filter((x) => !x.startsWith("a2a_")).indexOf(id)}`
      : `body.delegate_agent_ids.${i}`;

/**
 * Delegates as tools (`delegate__<id>`), one hop: a turn at depth >= 1 gets
 * none and may not name any. local-extractive consults each delegate once in
 * deep mode (the plan); the answer comes back as a citable passage.
 */
export const delegationProvider: ToolProvider = {
  name: "delegation",
  async validate(scope, settings) {
    if (!settings.delegateIds.length) return;
    const agentConfig = (scope as { agentId?: unknown }).agentId !== undefined;
    if (scope.depth >= 1) {
      throw badRequest("A delegate cannot delegate further (delegation is one hop)", [
        { path: "body.delegate_agent_ids", message: "Not allowed inside a delegate" },
      ]);
    }
    const origin = originOf(scope);
    const bad: ErrorDetail[] = [];
    for (const [i, id] of settings.delegateIds.entries()) {
      const resolver = resolverFor(id);
      const ok = resolver ? await resolver.resolve(origin, id) : null;
      if (!ok) bad.push({ path: pathOf(id, i, agentConfig, settings.delegateIds), message: `${id}: unknown, archived, or not open to delegation from here` });
    }
    if (bad.length) throw badRequest(`Delegate(s) cannot be resolved: ${bad.map((b) => b.message.split(":")[0]).join(", ")}`, bad);
  },
  async tools(scope, settings) {
    if (scope.depth >= 1 || !settings.delegateIds.length) return [];
    const origin = originOf(scope);
    const out: Tool[] = [];
    for (const id of settings.delegateIds) {
      const resolver = resolverFor(id);
      const info = resolver ? await resolver.resolve(origin, id) : null;
      if (!resolver || !info) continue;
      out.push({
        name: `delegate__${id}`,
        description: `Ask the agent "${info.name}" (${(info.description ?? "").slice(0, 200)}). It answers from its own knowledge base.`,
        inputSchema: {
          type: "object",
          properties: { question: { type: "string", description: "The question or task for the agent" } },
          required: ["question"],
          additionalProperties: false,
        },
        kind: "passages",
        origin: { type: "internal" },
        // A delegate runs a whole turn of its own.
        timeoutMs: 120_000,
        plan: (question, s) => (s.mode === "deep" ? { question } : null),
        async execute(input, ctx) {
          const question = String(input.question ?? "").trim();
          if (!question) return { isError: true, text: "question is required" };
          await ctx.emit({ type: "agent_thought", content: `Asking the agent "${info.name}".` });
          // Rules are checked again now (a knowledge base may have closed inbound delegation since).
          const r = await resolver.delegate(originOf(ctx.scope), id, {
            question,
            parentRunId: ctx.scope.runId,
            actor: ctx.scope.actor,
            signal: ctx.signal,
            streaming: ctx.scope.streaming,
          });
          if (r.isError && r.text) return { isError: true, text: r.text, delegatedAgentId: r.delegatedAgentId };
          return { passages: [r.passage], delegatedAgentId: r.delegatedAgentId, isError: r.isError };
        },
      });
    }
    return out;
  },
};

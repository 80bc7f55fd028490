import type { Caller } from "../../contracts/caller";
import type { ServiceContext } from "../../contracts/context";
import type { Database } from "../../db/client";
import { skills, type AgentConfig } from "../../db/schema";
import { badRequest, type ErrorDetail } from "../../lib/errors";
import { and, eq, inArray } from "drizzle-orm";
import { resolveModel } from "../chats/turns";
import { serversOfOrganization } from "../mcp/servers";
import { emptyToolSettings, type ToolSettings } from "../../contracts/tools";

/**
 * Every up-front check of an agent's configuration (400 naming the field): the model, skills active in the
 * tenant, MCP servers of the organization (an agent may not name one that is gone), A2A registration ids, and
 * what the tool providers check for a chat turn (connected apps, delegates).
 */

export interface AgentOwner {
  id: string | null;
  organizationId: string;
  environmentId: string;
  tenantId: string;
  knowledgeBaseId: string;
}

const subjectOf = (caller: Caller) => (caller.type === "user" ? `user:${caller.user.id}` : `key:${caller.key.id}`);

async function assertSkills(db: Database, tenantId: string, refs: AgentConfig["skills"]): Promise<void> {
  if (!refs.length) return;
  const ids = [...new Set(refs.map((s) => s.skill_id))];
  const rows = await db
    .select({ id: skills.id })
    .from(skills)
    .where(and(eq(skills.tenantId, tenantId), eq(skills.status, "active"), inArray(skills.id, ids)))
    .all();
  const found = new Set(rows.map((r) => r.id));
  const bad: ErrorDetail[] = [];
  refs.forEach((s, i) => {
    if (!found.has(s.skill_id)) bad.push({ path: `body.skills.${i}.skill_id`, message: `${s.skill_id}: not an active skill of this tenant` });
  });
  if (bad.length) throw badRequest(`Unknown or archived skill(s): ${bad.map((b) => b.message.split(":")[0]).join(", ")}`, bad);
  if (ids.length !== refs.length) throw badRequest("A skill is attached twice", [{ path: "body.skills", message: "Duplicate skill_id" }]);
}

async function assertMcpServers(db: Database, organizationId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  const known = new Set((await serversOfOrganization(db, organizationId, ids)).map((r) => r.id));
  const bad = ids.filter((id) => !known.has(id));
  if (!bad.length) return;
  throw badRequest(
    `Unknown MCP server(s) for this organization: ${bad.join(", ")}`,
    bad.map((id) => ({ path: `body.mcp_server_ids.${ids.indexOf(id)}`, message: `${id}: not an MCP server of this organization` })),
  );
}

function assertA2aIds(ids: string[]): void {
  for (const [i, id] of ids.entries()) {
    if (!id.startsWith("a2a_")) {
      throw badRequest(`a2a_agent_ids takes A2A registration ids (a2a_…); ${id} is not one`, [{ path: `body.a2a_agent_ids.${i}`, message: "Not an A2A registration id" }]);
    }
  }
}

/** Connected apps and delegates: the providers that own them check them, as for a chat turn. */
async function assertByProviders(ctx: ServiceContext, owner: AgentOwner, cfg: AgentConfig): Promise<void> {
  const settings: ToolSettings = {
    ...emptyToolSettings(),
    websearch: cfg.websearch_enable,
    mcpServerIds: cfg.mcp_server_ids,
    connectorSlugs: cfg.connector_slugs,
    delegateIds: [...cfg.delegate_agent_ids, ...cfg.a2a_agent_ids],
  };
  const caller = ctx.caller;
  const scope = {
    db: ctx.db,
    env: ctx.env,
    chat: {
      id: `agent:${owner.id ?? "new"}`,
      organizationId: owner.organizationId,
      environmentId: owner.environmentId,
      tenantId: owner.tenantId,
      knowledgeBaseId: owner.knowledgeBaseId,
    },
    subject: caller ? subjectOf(caller) : "system",
    mode: cfg.agent_mode,
    depth: 0,
    agentId: owner.id,
  };
  for (const p of ctx.capabilities.tools) if (p.validate) await p.validate(scope, settings);
}

export async function validateConfig(ctx: ServiceContext, owner: AgentOwner, cfg: AgentConfig): Promise<void> {
  resolveModel(ctx, cfg.model, "body.model");
  await assertSkills(ctx.db, owner.tenantId, cfg.skills);
  await assertMcpServers(ctx.db, owner.organizationId, cfg.mcp_server_ids);
  assertA2aIds(cfg.a2a_agent_ids);
  await assertByProviders(ctx, owner, cfg);
}

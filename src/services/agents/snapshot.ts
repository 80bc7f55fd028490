import { and, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client";
import { skills, type Agent, type RunSnapshot, type Skill } from "../../db/schema";
import { terms } from "../../lib/text";
import { LOCAL_MODEL_ID } from "../models/registry";

/** `auto` skills load offline when the task shares enough terms with the skill's name and description. */
export function skillMatches(task: string, skill: { name: string; description: string }): boolean {
  const want = new Set(terms(task));
  const have = [...new Set(terms(`${skill.name} ${skill.description}`))];
  const shared = have.filter((t) => want.has(t)).length;
  return shared >= 2 || (shared >= 1 && have.length <= 3);
}

/** Pins the version's configuration and resolves skills to their current content (archived ones are gone). */
export async function buildSnapshot(db: Database, agent: Agent, task: string): Promise<RunSnapshot> {
  const read = skillsOfAgent(db, agent);
  return snapshotOf(agent, task, read ? await read.all() : []);
}

/** The read of the agent's skills (null when it has none), to run alone or in a batch with other reads. */
export function skillsOfAgent(db: Database, agent: Agent) {
  const ids = agent.config.skills.map((s) => s.skill_id);
  return ids.length ? db.select().from(skills).where(and(eq(skills.tenantId, agent.tenantId), eq(skills.status, "active"), inArray(skills.id, ids))) : null;
}

/** `buildSnapshot` from the skills already read (`skillsOfAgent`). */
export function snapshotOf(agent: Agent, task: string, rows: Skill[]): RunSnapshot {
  const cfg = agent.config;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const local = cfg.model === LOCAL_MODEL_ID;
  return {
    agentVersion: agent.agentVersion,
    goal: cfg.goal,
    instructions: cfg.instructions,
    model: cfg.model,
    agent_mode: cfg.agent_mode,
    tools: {
      websearch_enable: cfg.websearch_enable,
      mcp_server_ids: cfg.mcp_server_ids,
      connector_slugs: cfg.connector_slugs,
      delegate_agent_ids: cfg.delegate_agent_ids,
      a2a_agent_ids: cfg.a2a_agent_ids,
    },
    skills: cfg.skills
      .filter((s) => byId.has(s.skill_id))
      .map((s) => {
        const sk = byId.get(s.skill_id)!;
        // Tool-calling models load `auto` skills themselves (load_skill); offline, term overlap decides.
        const loaded = s.mode === "always" || (local && skillMatches(task, sk));
        return { skill_id: sk.id, mode: s.mode, name: sk.name, description: sk.description, body: sk.body, loaded };
      }),
    task,
  };
}

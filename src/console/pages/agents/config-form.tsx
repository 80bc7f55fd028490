import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { api, unwrap } from "../../api/client";
import { Field, Select, TextArea } from "../../ui/ui";
import { useA2aAgents, useAgents, useMcpServers, useModels, type Agent } from "./hooks";

/** The fields of an agent's configuration the console edits (skills are kept as they are). */
export interface ConfigDraft {
  name: string;
  description: string;
  goal: string;
  instructions: string;
  model: string;
  agent_mode: "quick" | "deep";
  websearch_enable: boolean;
  mcp_server_ids: string[];
  connector_slugs: string[];
  a2a_agent_ids: string[];
  delegate_agent_ids: string[];
  skills: { skill_id: string; mode: "always" | "auto" }[];
}

export const EMPTY_DRAFT: ConfigDraft = {
  name: "",
  description: "",
  goal: "",
  instructions: "",
  model: "",
  agent_mode: "quick",
  websearch_enable: false,
  mcp_server_ids: [],
  connector_slugs: [],
  a2a_agent_ids: [],
  delegate_agent_ids: [],
  skills: [],
};

export function draftOf(a: Agent): ConfigDraft {
  return {
    name: a.name,
    description: a.description ?? "",
    goal: a.goal,
    instructions: a.instructions ?? "",
    model: a.model,
    agent_mode: a.agent_mode,
    websearch_enable: a.websearch_enable,
    mcp_server_ids: a.mcp_server_ids,
    connector_slugs: a.connector_slugs,
    a2a_agent_ids: a.a2a_agent_ids,
    delegate_agent_ids: a.delegate_agent_ids,
    skills: a.skills,
  };
}

/** The body fields for create and deploy (empty optional texts become null). */
export function bodyOf(d: ConfigDraft) {
  return { ...d, description: d.description || null, instructions: d.instructions || null };
}

/**
 * A deploy's body: only the fields that changed (the rest keep their value and are not validated again, so an
 * unchanged connector or skill cannot refuse the deploy); nothing changed republishes the same configuration.
 */
export function changedFields(before: ConfigDraft, after: ConfigDraft): Partial<ReturnType<typeof bodyOf>> {
  const b = bodyOf(before);
  const a = bodyOf(after);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(a) as (keyof typeof a)[]) if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) out[k] = a[k];
  return out as Partial<ReturnType<typeof bodyOf>>;
}

function Checklist({ legend, items, picked, onChange, empty }: { legend: string; items: { id: string; label: string; hint?: string }[]; picked: string[]; onChange: (ids: string[]) => void; empty: string }) {
  return (
    <fieldset className="scopes">
      <legend>{legend}</legend>
      {!items.length && <p className="muted small">{empty}</p>}
      {items.map((i) => (
        <label key={i.id} className="check">
          <input type="checkbox" checked={picked.includes(i.id)} onChange={() => onChange(picked.includes(i.id) ? picked.filter((x) => x !== i.id) : [...picked, i.id])} />
          {i.label} {i.hint && <span className="muted small">{i.hint}</span>}
        </label>
      ))}
    </fieldset>
  );
}

type SkillMode = "" | "always" | "auto";

/** The tenant's active skills, each not used, always loaded, or loaded when the agent finds it applies. */
function SkillPicker({ tenantId, picked, onChange }: { tenantId?: string; picked: ConfigDraft["skills"]; onChange: (s: ConfigDraft["skills"]) => void }) {
  const skills = useQuery({
    queryKey: ["skills", tenantId],
    enabled: !!tenantId,
    queryFn: () => unwrap(api.GET("/api/v1/skills", { params: { query: { tenant_id: tenantId!, limit: 100 } } })),
  });
  const active = (skills.data?.skills ?? []).filter((s) => s.status === "active");
  const set = (id: string, mode: SkillMode) => onChange([...picked.filter((p) => p.skill_id !== id), ...(mode ? [{ skill_id: id, mode }] : [])]);
  return (
    <fieldset className="scopes">
      <legend>Skills</legend>
      {!active.length && <p className="muted small">No skills in this tenant.</p>}
      {active.map((s) => (
        <Select
          key={s.id}
          label={s.name}
          value={picked.find((p) => p.skill_id === s.id)?.mode ?? ""}
          onChange={(e) => set(s.id, e.target.value as SkillMode)}
          options={[{ value: "", label: "Not used" }, { value: "always", label: "Always" }, { value: "auto", label: "When it applies" }]}
        />
      ))}
    </fieldset>
  );
}

/** The configuration fields of an agent: what it does, its model, and the tools it may use. */
export function ConfigFields({ orgId, tenantId, kbId, selfId, draft, set }: { orgId: string; tenantId?: string; kbId?: string; selfId?: string; draft: ConfigDraft; set: (d: ConfigDraft) => void }) {
  const models = useModels();
  const mcp = useMcpServers(orgId);
  const a2a = useA2aAgents(kbId);
  const agents = useAgents(tenantId);
  const catalog = useQuery({ queryKey: ["connector-catalog"], queryFn: () => unwrap(api.GET("/api/v1/connectors/catalog", { params: { query: { limit: 100 } } })) });
  const f = <K extends keyof ConfigDraft>(k: K) => (v: ConfigDraft[K]) => set({ ...draft, [k]: v });
  const modelOptions = (models.data?.models ?? []).map((m) => ({ value: m.id, label: `${m.display_name}${m.available ? "" : " (not available)"}` }));
  if (draft.model && !modelOptions.some((o) => o.value === draft.model)) modelOptions.unshift({ value: draft.model, label: draft.model });
  const webId = useId();
  return (
    <>
      <Field label="Agent name" required value={draft.name} onChange={(e) => f("name")(e.target.value)} />
      <Field label="Description (optional)" value={draft.description} onChange={(e) => f("description")(e.target.value)} />
      <TextArea label="Goal" required value={draft.goal} onChange={(e) => f("goal")(e.target.value)} hint="What the agent is for; a run without a message (and a scheduled run without its own task) works on it." />
      <TextArea label="Instructions (optional)" value={draft.instructions} onChange={(e) => f("instructions")(e.target.value)} />
      <div className="inline-form">
        <Select label="Model" value={draft.model} onChange={(e) => f("model")(e.target.value)} options={[{ value: "", label: "Choose a model…" }, ...modelOptions]} />
        <Select label="Mode" value={draft.agent_mode} onChange={(e) => f("agent_mode")(e.target.value as "quick" | "deep")} options={[{ value: "quick", label: "Quick (one pass)" }, { value: "deep", label: "Deep (plans, uses tools)" }]} />
        <label className="check" htmlFor={webId}>
          <input id={webId} type="checkbox" checked={draft.websearch_enable} onChange={(e) => f("websearch_enable")(e.target.checked)} /> Web search
        </label>
      </div>
      <SkillPicker tenantId={tenantId} picked={draft.skills} onChange={f("skills")} />
      <Checklist legend="MCP servers" items={(mcp.data?.servers ?? []).map((s) => ({ id: s.id, label: s.name, hint: `${s.tool_count} tools` }))} picked={draft.mcp_server_ids} onChange={f("mcp_server_ids")} empty="No MCP servers registered in this organization." />
      <Checklist legend="Connected apps (deep mode)" items={(catalog.data?.connectors ?? []).filter((c) => c.available).map((c) => ({ id: c.slug, label: c.name }))} picked={draft.connector_slugs} onChange={f("connector_slugs")} empty="No app can be connected yet." />
      <Checklist legend="External A2A agents to delegate to" items={(a2a.data?.a2a_agents ?? []).map((a) => ({ id: a.id, label: a.name }))} picked={draft.a2a_agent_ids} onChange={f("a2a_agent_ids")} empty={kbId ? "No external agents registered for this knowledge base." : "Pick a knowledge base first."} />
      <Checklist legend="Agents to delegate to" items={(agents.data?.agents ?? []).filter((a) => a.id !== selfId).map((a) => ({ id: a.id, label: a.name }))} picked={draft.delegate_agent_ids} onChange={f("delegate_agent_ids")} empty="No other agents in this tenant." />
    </>
  );
}

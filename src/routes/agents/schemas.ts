import { z } from "@hono/zod-openapi";
import { Timestamp } from "../../lib/openapi";

const ids = (max: number, what: string) => z.array(z.string().min(1).max(128)).max(max).openapi({ description: what });

export const ScheduleInput = z.union([
  z.string().min(1).max(200).openapi({ description: "A 5-field cron expression (UTC)", example: "0 9 * * 1-5" }),
  z.object({
    cron: z.string().min(1).max(200),
    timezone: z.string().min(1).max(64).default("UTC").openapi({ description: "IANA time zone", example: "Europe/Berlin" }),
    enabled: z.boolean().default(true),
    message: z.string().min(1).max(32_000).nullable().optional().openapi({ description: "The task a scheduled run performs (default: the goal)" }),
  }),
]);

const configShape = {
  name: z.string().trim().min(1).max(255),
  description: z.string().max(2000).nullable().optional(),
  goal: z.string().trim().min(1).max(8000),
  instructions: z.string().max(32_000).nullable().optional(),
  model: z.string().min(1).max(128),
  agent_mode: z.enum(["quick", "deep"]).optional(),
  skills: z.array(z.object({ skill_id: z.string().min(1).max(128), mode: z.enum(["always", "auto"]) })).max(50).optional(),
  mcp_server_ids: ids(25, "MCP registrations of the organization").optional(),
  connector_slugs: ids(25, "Connected apps (deep mode), connected for the bound identity").optional(),
  websearch_enable: z.boolean().optional(),
  delegate_agent_ids: ids(10, "Agents to delegate to (one hop)").optional(),
  a2a_agent_ids: ids(10, "A2A registrations of the knowledge base").optional(),
  schedule: ScheduleInput.nullable().optional(),
};

export const CreateAgentBody = z
  .object({ tenant_id: z.string().min(1).max(128), knowledge_base_id: z.string().min(1).max(128), ...configShape })
  .openapi("CreateAgent");

export const DeployAgentBody = z
  .object(configShape)
  .partial()
  .extend({
    tenant_id: z.unknown().optional().openapi({ description: "Not accepted: the tenant is fixed at creation (400)" }),
    knowledge_base_id: z.unknown().optional().openapi({ description: "Not accepted: the knowledge base is fixed at creation (400)" }),
  })
  .openapi("DeployAgent");

const SkillRef = z.object({ skill_id: z.string(), mode: z.enum(["always", "auto"]) });

const ConfigOut = {
  name: z.string(),
  description: z.string().nullable(),
  goal: z.string(),
  instructions: z.string().nullable(),
  model: z.string(),
  agent_mode: z.enum(["quick", "deep"]),
  skills: z.array(SkillRef),
  mcp_server_ids: z.array(z.string()),
  connector_slugs: z.array(z.string()),
  websearch_enable: z.boolean(),
  delegate_agent_ids: z.array(z.string()),
  a2a_agent_ids: z.array(z.string()),
};

export const ScheduleSchema = z
  .object({
    cron: z.string(),
    timezone: z.string(),
    enabled: z.boolean(),
    message: z.string().nullable(),
    next_run_at: z.string().nullable(),
    bound_identity: z.object({ type: z.enum(["user", "api_key"]), id: z.string() }).nullable(),
  })
  .openapi("AgentSchedule");

export const AgentSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    knowledge_base_id: z.string(),
    agentVersion: z.number().int(),
    status: z.enum(["active", "archived"]),
    ...ConfigOut,
    schedule: ScheduleSchema.nullable(),
    archived_at: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Agent");

export const VersionSchema = z
  .object({
    agentVersion: z.number().int(),
    config: z.object({ ...ConfigOut, schedule: z.object({ cron: z.string(), timezone: z.string(), enabled: z.boolean(), message: z.string().nullable() }).nullable() }),
    created_at: Timestamp,
    created_by: z.string().nullable(),
  })
  .openapi("AgentVersion");

const UsageSchema = z.object({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number(), credits: z.number() });

export const RunSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    agentVersion: z.number().int(),
    status: z.enum(["queued", "running", "completed", "failed", "cancelled"]),
    trigger: z.enum(["api", "schedule", "delegation"]),
    scheduled_for: z.string().nullable(),
    chat_id: z.string().nullable(),
    parent_run_id: z.string().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    usage: UsageSchema.nullable(),
    output: z.string().nullable().openapi({ description: "The answer (partial for a failed or cancelled run)" }),
    message_id: z.string().nullable(),
    snapshot: z.record(z.string(), z.unknown()).nullable().openapi({ description: "What the run ran with: goal, instructions, model, tools, resolved skills" }),
    started_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    created_at: Timestamp,
  })
  .openapi("AgentRun");

export const RunMessageBody = z
  .object({
    content: z.string().trim().min(1).max(32_000),
    chat_id: z.string().min(1).max(128).optional().openapi({ description: "Continue a chat of this agent" }),
    external_subject_id: z.string().min(1).max(255).optional(),
  })
  .openapi("AgentRunMessage");


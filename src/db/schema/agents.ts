import { integer, primaryKey, sqliteTable, text, unique } from "drizzle-orm/sqlite-core";
import { tenantOwned } from "./owned";
import { timestamps } from "./columns";

export const AGENT_STATUSES = ["active", "archived"] as const;
export const RUN_STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export const RUN_TRIGGERS = ["api", "schedule", "delegation"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/** One attached skill: `always` puts the body in every run, `auto` only when the task matches. */
export interface AgentSkillRef {
  skill_id: string;
  mode: "always" | "auto";
}

export interface AgentScheduleConfig {
  cron: string;
  timezone: string;
  enabled: boolean;
  message: string | null;
}

/** What a version pins (API names). */
export interface AgentConfig {
  name: string;
  description: string | null;
  goal: string;
  instructions: string | null;
  model: string;
  agent_mode: "quick" | "deep";
  skills: AgentSkillRef[];
  mcp_server_ids: string[];
  connector_slugs: string[];
  websearch_enable: boolean;
  delegate_agent_ids: string[];
  a2a_agent_ids: string[];
  schedule: AgentScheduleConfig | null;
}

/** What a run ran with: its version's configuration at start, skills as resolved then. */
export interface RunSnapshot {
  agentVersion: number;
  goal: string;
  instructions: string | null;
  model: string;
  agent_mode: "quick" | "deep";
  tools: {
    websearch_enable: boolean;
    mcp_server_ids: string[];
    connector_slugs: string[];
    delegate_agent_ids: string[];
    a2a_agent_ids: string[];
  };
  skills: Array<{ skill_id: string; mode: "always" | "auto"; name: string; description: string; body: string; loaded: boolean }>;
  task: string;
}

export interface RunUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  credits: number;
}

export const agents = sqliteTable("agents", {
  id: text("id").primaryKey(),
  ...tenantOwned(),
  knowledgeBaseId: text("knowledge_base_id").notNull(),
  status: text("status", { enum: AGENT_STATUSES }).notNull().default("active"),
  agentVersion: integer("agent_version").notNull().default(1),
  config: text("config", { mode: "json" }).$type<AgentConfig>().notNull(),
  scheduleCron: text("schedule_cron"),
  scheduleTimezone: text("schedule_timezone"),
  scheduleMessage: text("schedule_message"),
  scheduleEnabled: integer("schedule_enabled", { mode: "boolean" }).notNull().default(false),
  scheduleUserId: text("schedule_user_id"),
  scheduleApiKeyId: text("schedule_api_key_id"),
  nextRunAt: text("next_run_at"),
  createdBy: text("created_by"),
  archivedAt: text("archived_at"),
  ...timestamps(),
});

export const agentVersions = sqliteTable(
  "agent_versions",
  {
    agentId: text("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    config: text("config", { mode: "json" }).$type<AgentConfig>().notNull(),
    createdBy: text("created_by"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.version] })],
);

export const agentRuns = sqliteTable(
  "agent_runs",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull().references(() => agents.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull(),
    tenantId: text("tenant_id").notNull(),
    agentVersion: integer("agent_version").notNull(),
    status: text("status", { enum: RUN_STATUSES }).notNull(),
    trigger: text("trigger", { enum: RUN_TRIGGERS }).notNull(),
    scheduledFor: text("scheduled_for"),
    chatId: text("chat_id"),
    owner: text("owner"),
    parentRunId: text("parent_run_id"),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    usage: text("usage", { mode: "json" }).$type<RunUsage | null>(),
    snapshot: text("snapshot", { mode: "json" }).$type<RunSnapshot | null>(),
    output: text("output"),
    messageId: text("message_id"),
    startedAt: text("started_at"),
    endedAt: text("ended_at"),
    createdAt: text("created_at").notNull(),
    /** While queued or running: renewed by the run's turn; a lapsed lease means its worker is gone (0015). */
    leaseExpiresAt: text("lease_expires_at"),
  },
  (t) => [unique().on(t.agentId, t.scheduledFor)],
);

export type Agent = typeof agents.$inferSelect;
export type AgentVersion = typeof agentVersions.$inferSelect;
export type AgentRun = typeof agentRuns.$inferSelect;

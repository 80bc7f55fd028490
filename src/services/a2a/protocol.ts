import type { AgentCard, Message, Part, Task, TaskState } from "@a2a-js/sdk";
import type { Agent, AgentRun } from "../../db/schema";

/** Our agents in the A2A protocol's terms: a run as a Task, the agent as an AgentCard, text as Parts. */

// ts-proto enum values of @a2a-js/sdk (types are imported; values would load the SDK).
export const STATE = { SUBMITTED: 1, WORKING: 2, COMPLETED: 3, FAILED: 4, CANCELED: 5 } as const;
export const ROLE_USER = 1;
export const ROLE_AGENT = 2;

export const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" });

export function stateOf(status: AgentRun["status"]): TaskState {
  switch (status) {
    case "queued":
      return STATE.SUBMITTED as TaskState;
    case "running":
      return STATE.WORKING as TaskState;
    case "completed":
      return STATE.COMPLETED as TaskState;
    case "cancelled":
      return STATE.CANCELED as TaskState;
    default:
      return STATE.FAILED as TaskState;
  }
}

export const agentMessage = (run: { id: string; chatId: string | null }, text: string): Message => ({
  messageId: `${run.id}:answer`,
  contextId: run.chatId ?? "",
  taskId: run.id,
  role: ROLE_AGENT as Message["role"],
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** A run as an A2A task: the answer is the status message and the `answer` artifact (sources in its metadata). */
export function taskOfRun(run: AgentRun, extra: { question?: string; sources?: unknown[] } = {}): Task {
  const answer = run.output ?? "";
  const error = run.errorCode ? `${run.errorCode}: ${run.errorMessage ?? ""}` : null;
  const statusText = run.status === "failed" ? (error ?? "The run failed") : answer;
  const history: Message[] = [];
  if (extra.question) {
    history.push({
      messageId: `${run.id}:question`,
      contextId: run.chatId ?? "",
      taskId: run.id,
      role: ROLE_USER as Message["role"],
      parts: [textPart(extra.question)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    });
  }
  return {
    id: run.id,
    contextId: run.chatId ?? "",
    status: {
      state: stateOf(run.status),
      message: statusText ? agentMessage(run, statusText) : undefined,
      timestamp: run.endedAt ?? run.startedAt ?? run.createdAt,
    },
    artifacts: answer
      ? [
          {
            artifactId: `${run.id}:answer`,
            name: "answer",
            description: "The agent's answer, citing its sources as [n]",
            parts: [textPart(answer)],
            metadata: extra.sources ? { sources: extra.sources } : undefined,
            extensions: [],
          },
        ]
      : [],
    history,
    metadata: { run_id: run.id, agent_id: run.agentId, agentVersion: run.agentVersion, status: run.status },
  };
}

/** The public card of one of our agents: JSON-RPC 1.0 (and 0.3) at /agents/:id/a2a, bearer API keys. */
export function cardOfAgent(agent: Agent, origin: string): AgentCard {
  const url = `${origin}/api/v1/agents/${agent.id}/a2a`;
  const cfg = agent.config;
  const description = cfg.description ?? `The agent "${cfg.name}", answering from its knowledge base with cited sources.`;
  return {
    name: cfg.name,
    description,
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" },
    ],
    provider: undefined,
    version: String(agent.agentVersion),
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: { description: "An API key that may run this agent (scope query:rag): Authorization: Bearer kbk_...", scheme: "Bearer", bearerFormat: "API key" },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [
      {
        id: "ask",
        name: cfg.name,
        description,
        tags: ["knowledge-base", "cited-answers"],
        examples: [],
        inputModes: ["text/plain"],
        outputModes: ["text/plain"],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

export const textOf = (m: Message | undefined) =>
  (m?.parts ?? [])
    .map((p) => (p.content?.$case === "text" ? p.content.value : p.content?.$case === "data" ? JSON.stringify(p.content.value) : ""))
    .filter(Boolean)
    .join("\n")
    .trim();

/**
 * Our errors become JSON-RPC errors with a readable message (the code first);
 * anything unexpected is logged and answered without internals.
 */

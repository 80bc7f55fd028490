import type { AgentCard, CancelTaskRequest, GetTaskRequest, Message, SendMessageRequest, StreamResponse, Task, TaskState } from "@a2a-js/sdk";
import type { ServiceContext } from "../../contracts/context";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { Agent, AgentRun } from "../../db/schema";
import { ApiError, notFound } from "../../lib/errors";
import { assertActive } from "../agents/agents";
import { executeRunJson, executeRunStream } from "../agents/execute";
import { cancelRun, chatAgentId, getRun, visibleRun, type PublicRun } from "../agents/runs";
import { startRunSearched } from "../agents/run-search";
import { runViewerOf } from "../../contracts/access";
import { actorOf, assertCreditsLeft } from "../billing/metering";
import { assertNotTerminated, ownsChat } from "../chats/access";
import { stopTurn } from "../chats/session";
import { assertKnowledgeBaseActive, resolveModel } from "../chats/turns";
import { readRunState, type RunState } from "../agents/run-reads";
import { taskHistory } from "./history";
import { cardOfAgent, STATE, taskOfRun, textOf, textPart } from "./protocol";

/**
 * Our agents as A2A agents (API-DECISIONS "External (A2A) agents"). Each A2A
 * task IS a run of the agent: task id = run id, context id = the run's chat id
 * (a message that names a context continues that chat). Tasks are read from
 * the runs table, so they persist across requests and isolates; `CancelTask`
 * stops the run like POST /agents/:id/runs/:runId/stop. The SDK's JSON-RPC
 * transport handlers (1.0, and 0.3 through its compatibility layer) parse the
 * protocol and call this handler.
 */

/** The run as a stream's last event carries it (its public shape), over the row the run started with. */
function endedRun(started: AgentRun, ended: PublicRun): AgentRun {
  return {
    ...started,
    status: ended.status,
    errorCode: ended.error?.code ?? null,
    errorMessage: ended.error?.message ?? null,
    usage: ended.usage,
    output: ended.output,
    messageId: ended.message_id,
    startedAt: ended.started_at,
    endedAt: ended.ended_at,
  };
}

async function sdkErrors() {
  return import("@a2a-js/sdk/errors");
}

export class AgentTaskHandler implements A2ARequestHandler {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly agent: Agent,
    /** The origin the agent was addressed at (its card's URLs). */
    private readonly origin: string,
    /** The run's state, read with the agent (src/services/agents/run-reads.ts); null: read when a run starts. */
    private readonly runState: RunState | null = null,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return cardOfAgent(this.agent, this.origin);
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    const { UnsupportedOperationError } = await sdkErrors();
    throw new UnsupportedOperationError("This agent has no extended card.");
  }

  /** Everything that must hold before a run starts (the checks of POST /agents/:id/messages). */
  private async prepare(params: SendMessageRequest, streaming: boolean) {
    const { RequestMalformedError, UnsupportedOperationError } = await sdkErrors();
    const c = this.ctx;
    const db = c.db;
    const caller = c.caller;
    const msg = params.message;
    const content = textOf(msg);
    if (!msg || !content) throw new RequestMalformedError("The message needs at least one text part.");
    if (content.length > 32_000) throw new RequestMalformedError("The message is longer than 32,000 characters.");
    if (msg.taskId) {
      // Every task ends with its run; a finished task takes no more input.
      const run = await this.runOf(msg.taskId);
      throw new UnsupportedOperationError(`Task ${run.id} is ${run.status} and cannot take more input; send a new message with its contextId instead.`);
    }
    try {
      assertActive(this.agent);
      // One round trip for everything below (the chat, the knowledge base, the credits, skills, data files),
      // already made with the agent's own read when it was for this conversation.
      const chatId = msg.contextId?.toLowerCase() ?? "";
      const state = this.runState?.chatId === chatId ? this.runState : await readRunState(db, this.agent, msg.contextId);
      let chat = null;
      if (msg.contextId) {
        chat = state.chat;
        // Only a conversation of this agent that this caller owns.
        if (!chat || chatAgentId(chat) !== this.agent.id || chat.tenantId !== this.agent.tenantId || !ownsChat(caller, chat, null)) {
          throw new RequestMalformedError(`contextId ${msg.contextId} is not a conversation of this agent`);
        }
        assertNotTerminated(chat);
      }
      const kb = state.kb;
      if (!kb) throw notFound("Knowledge base");
      assertKnowledgeBaseActive(kb);
      resolveModel(c, this.agent.config.model, "model");
      assertCreditsLeft(state.tenant);
      return await startRunSearched(c, {
        reads: state.reads,
        agent: this.agent,
        kb,
        trigger: "api",
        content,
        actor: actorOf(caller),
        subject: caller.type === "user" ? `user:${caller.user.id}` : `key:${caller.key.id}`,
        chat,
        owner: { userId: caller.type === "user" ? caller.user.id : null, apiKeyId: caller.type === "api_key" ? caller.key.id : null, externalSubjectId: null },
        stream: streaming,
      });
    } catch (e) {
      throw await this.mapError(e);
    }
  }

  private async mapError(e: unknown): Promise<Error> {
    const errors = await sdkErrors();
    if (e instanceof errors.A2AError) return e;
    if (e instanceof ApiError) {
      if (e.code === "not_found") return new errors.TaskNotFoundError(e.message);
      return new errors.UnsupportedOperationError(`${e.code}: ${e.message}`);
    }
    console.error("a2a: unexpected error", e instanceof Error ? e.message : e);
    return new Error("internal_error: the request failed");
  }

  async sendMessage(params: SendMessageRequest, _context: ServerCallContext): Promise<Message | Task> {
    const { cmd, run } = await this.prepare(params, false);
    const db = this.ctx.db;
    const question = cmd.content;
    if (params.configuration?.returnImmediately) {
      // Non-blocking: the run goes on after the response; GetTask follows it, CancelTask stops it.
      this.ctx.waitUntil(executeRunJson(this.ctx.env, db, cmd).catch((e) => console.error("a2a: background run failed", e instanceof Error ? e.message : e)));
      return taskOfRun(run, { question });
    }
    try {
      const { outcome, run: done } = await executeRunJson(this.ctx.env, db, cmd);
      return taskOfRun(done, { question, sources: outcome.sources as unknown[] });
    } catch (e) {
      throw await this.mapError(e);
    }
  }

  async *sendMessageStream(params: SendMessageRequest, _context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const { cmd, run } = await this.prepare(params, true);
    const db = this.ctx.db;
    const question = cmd.content;
    const base = { taskId: run.id, contextId: run.chatId ?? "", metadata: undefined };
    yield { payload: { $case: "task", value: taskOfRun(run, { question }) } };
    const res = await executeRunStream(this.ctx.env, db, cmd, (p) => this.ctx.waitUntil(p));
    if (!res.body) return;
    const artifactId = `${run.id}:answer`;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let started = false;
    let ended = false;
    try {
      while (!ended) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        let i: number;
        while ((i = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const line = block.split("\n").find((l) => l.startsWith("data: "));
          if (!line) continue;
          let ev: Record<string, any>;
          try {
            ev = JSON.parse(line.slice(6));
          } catch {
            continue;
          }
          if (ev.type === "user_message") {
            yield { payload: { $case: "statusUpdate", value: { ...base, status: { state: STATE.WORKING as TaskState, message: undefined, timestamp: new Date().toISOString() } } } };
          } else if (ev.type === "final_response" && typeof ev.content === "string") {
            const complete = ev.isComplete === true;
            if (!complete && !ev.content) continue;
            yield {
              payload: {
                $case: "artifactUpdate",
                value: {
                  ...base,
                  // Partial answers append; the complete answer replaces them.
                  artifact: { artifactId, name: "answer", description: "", parts: [textPart(ev.content)], metadata: undefined, extensions: [] },
                  append: started && !complete,
                  lastChunk: complete,
                },
              },
            };
            started = true;
          } else if (ev.type === "done" || ev.type === "error") {
            // `done` and `error` carry the run as it ended (the turn's hook or executeRunStream read it back).
            const finished = ev.run ? endedRun(run, ev.run as PublicRun) : ((await getRun(db, run.id)) ?? run);
            const task = taskOfRun(finished);
            yield { payload: { $case: "statusUpdate", value: { ...base, status: task.status } } };
            ended = true;
            break;
          }
        }
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  }

  /** A task this caller may see: exactly the runs GET /agents/:id/runs/:runId shows it (src/contracts/access.ts). */
  private async runOf(id: string): Promise<AgentRun> {
    const run = await visibleRun(this.ctx.db, this.agent.id, id ?? "", runViewerOf(this.ctx.caller));
    if (!run) throw new (await sdkErrors()).TaskNotFoundError(`Task not found: ${id}`);
    return run;
  }

  /** The task with its history (the run's question and answer), cut to `historyLength`. */
  async getTask(params: GetTaskRequest, _context: ServerCallContext): Promise<Task> {
    const run = await this.runOf(params.id);
    return { ...taskOfRun(run), history: await taskHistory(this.ctx.db, run, params.historyLength) };
  }

  async cancelTask(params: CancelTaskRequest, _context: ServerCallContext): Promise<Task> {
    const db = this.ctx.db;
    const run = await this.runOf(params.id);
    if (run.status === "cancelled") return taskOfRun(run);
    if (await cancelRun(db, run.id)) {
      // The turn saves its partial output into the (now cancelled) run.
      if (run.chatId) await stopTurn(this.ctx.env, run.chatId).catch((e) => console.error("a2a: stop failed", e instanceof Error ? e.message : e));
      return taskOfRun((await getRun(db, run.id))!);
    }
    throw new (await sdkErrors()).TaskNotCancelableError(`Task ${run.id} is ${run.status} and cannot be cancelled.`);
  }

  private async unsupported(): Promise<never> {
    const { UnsupportedOperationError } = await sdkErrors();
    throw new UnsupportedOperationError("Not supported by this agent (push notifications, task lists and resubscription are not offered).");
  }

  createTaskPushNotificationConfig(): Promise<never> {
    return this.unsupported();
  }
  getTaskPushNotificationConfig(): Promise<never> {
    return this.unsupported();
  }
  listTaskPushNotificationConfigs(): Promise<never> {
    return this.unsupported();
  }
  deleteTaskPushNotificationConfig(): Promise<never> {
    return this.unsupported();
  }
  listTasks(): Promise<never> {
    return this.unsupported();
  }
  // eslint-disable-next-line require-yield
  async *resubscribe(): AsyncGenerator<StreamResponse, void, undefined> {
    await this.unsupported();
  }
}

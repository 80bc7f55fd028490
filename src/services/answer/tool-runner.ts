import type { Source } from "../../db/schema";
import { newId } from "../../lib/ids";
import type { Tool, ToolOrigin, ToolOutput, TurnScope } from "../../contracts/tools";
import type { SourceLedger } from "./sources";
import type { Emit } from "../../contracts/turn";

/** Budgets of one tool call (API-DECISIONS "One agent loop with a toolbox"). */
export const TOOL_CALL_TIMEOUT_MS = 30_000;
export const TOOL_RESULT_MAX_CHARS = 32 * 1024;
/** Rows of a data_preview event. */
export const PREVIEW_ROWS = 20;

/** One call, as kept in the owner's message metadata (`tool_calls`); never in shared transcripts. */
export interface ToolCallRecord {
  call_id: string;
  tool: string;
  arguments: unknown;
  is_error: boolean;
  duration_ms: number;
}

export interface ToolCallResult {
  /** What the model reads: the tool's text plus its passages with their citation numbers. */
  text: string;
  sources: Source[];
  isError: boolean;
}

export function truncateForModel(text: string, max = TOOL_RESULT_MAX_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n…[truncated: the result was ${text.length} characters, only the first ${max} are shown]`;
}

export function renderSources(sources: Source[]): string {
  return sources
    .map((s) => {
      const where = [s.filename ?? s.url, s.page ? `page ${s.page}` : null].filter(Boolean).join(", ");
      return `[${s.index}] ${where ? `(${where}) ` : ""}${s.text.replace(/\s+/g, " ").trim()}`;
    })
    .join("\n\n");
}

/** Rejects when `signal` aborts, so a tool that ignores its signal cannot hold the turn. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Which remote tool an `mcp_tool_call` / `mcp_tool_result` event speaks of. */
const remoteCall = (o: Exclude<ToolOrigin, { type: "internal" }>, callId: string) => ({
  call_id: callId,
  server_id: o.type === "mcp" ? o.serverId : null,
  connector_slug: o.type === "connector" ? o.slug : null,
  tool: o.tool,
});

const describeInput = (input: Record<string, unknown>) => {
  const q = input.query ?? input.name ?? input.message;
  return typeof q === "string" ? `"${q.slice(0, 120)}"` : "";
};

/**
 * Runs toolbox tools for a turn — for the model's tool loop and for the
 * deterministic plan alike: the per-call time budget, errors turned into error
 * results (never a failed turn), passages numbered in the turn's ledger,
 * result text capped, data_preview / chart events, mcp_tool_call and
 * mcp_tool_result for external tools (agent_thought for the others), and the
 * call record.
 */
export class ToolRunner {
  readonly calls: ToolCallRecord[] = [];
  readonly delegatedAgentIds: string[] = [];

  constructor(
    private readonly scope: TurnScope,
    private readonly ledger: SourceLedger,
    private readonly emit: Emit,
    private readonly turnSignal: AbortSignal,
    private readonly timeoutMs = TOOL_CALL_TIMEOUT_MS,
  ) {}

  async call(tool: Tool, input: Record<string, unknown>, callId = newId("call")): Promise<ToolCallResult> {
    const started = Date.now();
    await this.announce(tool, input, callId);
    const budget = tool.timeoutMs ?? this.timeoutMs;
    const timeout = AbortSignal.timeout(budget);
    const signal = AbortSignal.any([this.turnSignal, timeout]);
    let output: ToolOutput;
    try {
      output = await raceAbort(tool.execute(input, { signal, scope: this.scope, emit: this.emit, callId }), signal);
    } catch (e) {
      if (this.turnSignal.aborted) throw this.turnSignal.reason;
      const message = timeout.aborted
        ? `The tool did not answer within ${Math.round(budget / 1000)} s.`
        : `The tool failed: ${e instanceof Error ? e.message : String(e)}`;
      output = { text: message.slice(0, 2000), isError: true };
    }
    this.turnSignal.throwIfAborted();

    const sources = output.passages?.length ? this.ledger.add(output.passages) : [];
    const text = truncateForModel([output.text, sources.length ? renderSources(sources) : ""].filter(Boolean).join("\n\n") || "(no result)");
    const isError = Boolean(output.isError);
    if (output.delegatedAgentId && !this.delegatedAgentIds.includes(output.delegatedAgentId)) this.delegatedAgentIds.push(output.delegatedAgentId);
    if (output.data) {
      const { sql, columns, rows, row_count } = output.data;
      await this.emit({ type: "data_preview", sql, columns, rows: rows.slice(0, PREVIEW_ROWS), row_count });
    }
    if (output.chart) await this.emit({ type: "chart", spec: output.chart.spec });
    await this.report(tool, callId, text, isError, sources.length);
    this.calls.push({ call_id: callId, tool: tool.name, arguments: input, is_error: isError, duration_ms: Date.now() - started });
    return { text, sources, isError };
  }

  private async announce(tool: Tool, input: Record<string, unknown>, callId: string) {
    const o = tool.origin;
    if (o.type === "internal") {
      const what = tool.name === "kb__search" ? "Searching the knowledge base for" : tool.name === "web__search" ? "Searching the web for" : `Using ${tool.name}`;
      await this.emit({ type: "agent_thought", content: `${what} ${describeInput(input)}`.trim() + "." });
      return;
    }
    await this.emit({ type: "mcp_tool_call", ...remoteCall(o, callId), arguments: input });
  }

  private async report(tool: Tool, callId: string, text: string, isError: boolean, found: number) {
    const o = tool.origin;
    if (o.type === "internal") {
      const content = isError
        ? `${tool.name} failed: ${text.slice(0, 300)}`
        : tool.kind === "passages"
          ? `Found ${found} passage${found === 1 ? "" : "s"}.`
          : `${tool.name} finished.`;
      await this.emit({ type: "agent_thought", content });
      return;
    }
    await this.emit({ type: "mcp_tool_result", ...remoteCall(o, callId), result: text.slice(0, 4000), is_error: isError });
  }
}

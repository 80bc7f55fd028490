import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, unwrap } from "../../api/client";
import { newId } from "./chat-actions";
import { applyEvent, readEvents, turnFromMessage, type Turn } from "./stream";
import type { ToolChoice } from "./tools-panel";

export type Mode = "quick" | "deep";

/** Streams one answer into the last turn; resolves when the stream ends. */
async function streamAnswer(chatId: string, body: { content: string; model: string; agent_mode: Mode; delegate_agent_ids?: string[] }, signal: AbortSignal, update: (f: (t: Turn) => Turn) => void) {
  const { data, error, response } = await api.POST("/api/v1/chats/{id}/messages/stream", { params: { path: { id: chatId } }, body, parseAs: "stream", signal });
  if (!response.ok || !data) {
    const message = (error as { error?: { message?: string } } | undefined)?.error?.message ?? `The question was refused (HTTP ${response.status}).`;
    update((t) => ({ ...t, status: "error", error: message }));
    return;
  }
  await readEvents(data, (e) => update((t) => applyEvent(t, e)));
  update((t) => (t.status === "streaming" ? { ...t, status: "partial" } : t));
}

/**
 * A chat's saved messages, keeping what this page saw streamed and the answer does not save: the thoughts, the
 * rows of queries (data previews) and their charts.
 */
function merge(seen: Turn[], saved: Turn[]): Turn[] {
  return saved.map((t) => {
    const streamed = seen.find((x) => x.id === t.id);
    if (!streamed) return t;
    const steps = streamed.steps.length > t.steps.length ? streamed.steps : t.steps;
    return { ...t, steps, previews: streamed.previews, charts: streamed.charts };
  });
}

/**
 * The conversation of the playground: the open chat's messages, asking (a new chat on the first question,
 * then the answer streamed into the page), stopping, and the follow-up questions after an answer.
 */
export function useConversation({ kbId, tenantId, chatId, open }: { kbId: string; tenantId?: string; chatId: string | null; open: (id: string) => void }) {
  const qc = useQueryClient();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [followUps, setFollowUps] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [streaming, setStreaming] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const streamingFor = useRef<string | null>(null);
  const history = useQuery({
    queryKey: ["messages", chatId],
    enabled: !!chatId,
    queryFn: () => unwrap(api.GET("/api/v1/chats/{id}/messages", { params: { path: { id: chatId! }, query: { limit: 200 } } })),
  });
  useEffect(() => {
    // The chat being streamed into keeps what the page shows; any other shows its saved messages.
    if (streamingFor.current && streamingFor.current === chatId) return;
    setTurns((seen) => (chatId && history.data ? merge(seen, history.data.messages.map(turnFromMessage)) : []));
  }, [chatId, history.data]);
  useEffect(() => {
    if (streamingFor.current !== chatId) setFollowUps([]);
  }, [chatId]);
  const update = (f: (t: Turn) => Turn) => setTurns((cur) => [...cur.slice(0, -1), f(cur[cur.length - 1])]);

  /** The chat to ask in: the open one, or a new one (then opened). */
  const chatFor = async (question: string, model: string, mode: Mode, tools?: ToolChoice): Promise<string> => {
    if (chatId) return chatId;
    const id = newId();
    await unwrap(api.POST("/api/v1/chats", { body: { id, tenant_id: tenantId!, knowledge_base_id: kbId, model, agent_mode: mode, title: question.slice(0, 80) } }));
    // MCP servers chosen before the chat existed are enabled on it now.
    if (tools?.mcpServerIds.length) await unwrap(api.PATCH("/api/v1/chats/{id}/mcp-servers", { params: { path: { id } }, body: { enabled_mcp_server_ids: tools.mcpServerIds } }));
    streamingFor.current = id;
    open(id);
    return id;
  };

  const suggest = async (id: string) => {
    try {
      setFollowUps((await unwrap(api.POST("/api/v1/chats/follow-up-questions", { body: { knowledge_base_id: kbId, chat_id: id } }))).questions);
    } catch (e) {
      // The answer stands; say why there are no suggestions.
      setError(new Error(`No follow-up questions: ${(e as Error).message}`));
    }
  };

  /** Asks; false when the question could not even be sent (the caller keeps the text). */
  const ask = async (question: string, model: string, mode: Mode, tools?: ToolChoice): Promise<boolean> => {
    setError(null);
    setFollowUps([]);
    let id: string;
    try {
      id = await chatFor(question, model, mode, tools);
    } catch (e) {
      setError(e);
      return false;
    }
    streamingFor.current = id;
    const now = Date.now().toString(36);
    const blank = { sources: [], steps: [] };
    setTurns((cur) => [...cur, { id: `u${now}`, role: "user", content: question, status: "complete", ...blank }, { id: `a${now}`, role: "assistant", content: "", status: "streaming", ...blank }]);
    setStreaming(true);
    abort.current = new AbortController();
    try {
      const delegates = tools?.delegateIds.length ? { delegate_agent_ids: tools.delegateIds } : {};
      await streamAnswer(id, { content: question, model, agent_mode: mode, ...delegates }, abort.current.signal, update);
      await suggest(id);
    } catch (e) {
      const stopped = (e as Error).name === "AbortError";
      update((t) => (stopped ? { ...t, status: t.status === "streaming" ? "partial" : t.status } : { ...t, status: "error", error: (e as Error).message }));
    } finally {
      setStreaming(false);
      streamingFor.current = null;
      void qc.invalidateQueries({ queryKey: ["chats", kbId] });
      void qc.invalidateQueries({ queryKey: ["messages", id] });
    }
    return true;
  };

  const stop = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/chats/{id}/stop", { params: { path: { id: chatId! } } })),
    // The server ends the stream with the partial answer saved; if it cannot be reached, stop reading.
    onError: () => abort.current?.abort(),
  });

  return { turns, followUps, error, streaming, history, ask, stop };
}

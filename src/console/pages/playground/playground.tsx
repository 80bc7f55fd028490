import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { navigate, useLocation } from "../../router";
import { Button, Empty, ErrorNote, Loading, Select } from "../../ui/ui";
import { KbHeader, useKnowledgeBase } from "../kb-header";
import { TurnView } from "./answer";
import { ChatActions, newId } from "./chat-actions";
import { applyEvent, readEvents, turnFromMessage, type Turn } from "./stream";

type Mode = "quick" | "deep";

function useModels() {
  return useQuery({ queryKey: ["models"], queryFn: () => unwrap(api.GET("/api/v1/chats/models")), staleTime: 60_000 });
}

/** Streams one answer into the last turn; resolves when the stream ends. */
async function streamAnswer(chatId: string, body: { content: string; model: string; agent_mode: Mode }, signal: AbortSignal, update: (f: (t: Turn) => Turn) => void) {
  const { data, error, response } = await api.POST("/api/v1/chats/{id}/messages/stream", { params: { path: { id: chatId } }, body, parseAs: "stream", signal });
  if (!response.ok || !data) {
    const message = (error as { error?: { message?: string } } | undefined)?.error?.message ?? `The question was refused (HTTP ${response.status}).`;
    update((t) => ({ ...t, status: "error", error: message }));
    return;
  }
  await readEvents(data, (e) => update((t) => applyEvent(t, e)));
  update((t) => (t.status === "streaming" ? { ...t, status: "partial" } : t));
}

/** Chat with a knowledge base: quick or deep, streamed, with citations, tool events, stop, follow-ups, sharing and forking. */
export default function Playground({ orgId, kbId }: { orgId: string; kbId: string }) {
  const qc = useQueryClient();
  const kb = useKnowledgeBase(kbId);
  const { search } = useLocation();
  const chatId = search.get("chat");
  const models = useModels();
  const available = models.data?.models.filter((m) => m.available) ?? [];
  const [model, setModel] = useState("");
  const [mode, setMode] = useState<Mode>("quick");
  const [text, setText] = useState("");
  const [turns, setTurns] = useState<Turn[]>([]);
  const [followUps, setFollowUps] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [streaming, setStreaming] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const streamingFor = useRef<string | null>(null);
  const tenantId = kb.data?.tenant_id;
  const chatsKey = ["chats", kbId];
  const chats = useQuery({
    queryKey: chatsKey,
    enabled: !!tenantId,
    queryFn: () => unwrap(api.GET("/api/v1/chats", { params: { query: { tenant_id: tenantId!, knowledge_base_id: kbId, limit: 50 } } })),
  });
  const chat = chats.data?.chats.find((c) => c.id === chatId);
  const history = useQuery({
    queryKey: ["messages", chatId],
    enabled: !!chatId,
    queryFn: () => unwrap(api.GET("/api/v1/chats/{id}/messages", { params: { path: { id: chatId! }, query: { limit: 200 } } })),
  });
  useEffect(() => {
    if (!model && available.length) setModel(available[0].id);
  }, [available, model]);
  useEffect(() => {
    // A chat opened from the list (not the one being streamed into) shows its saved messages.
    if (streamingFor.current && streamingFor.current === chatId) return;
    // The thoughts streamed with an answer are not saved with it: keep the ones this page saw.
    setTurns((seen) =>
      chatId && history.data
        ? history.data.messages.map((m) => {
            const t = turnFromMessage(m);
            const streamed = seen.find((x) => x.id === t.id);
            return streamed && streamed.steps.length > t.steps.length ? { ...t, steps: streamed.steps } : t;
          })
        : [],
    );
  }, [chatId, history.data]);
  useEffect(() => {
    if (streamingFor.current !== chatId) setFollowUps([]);
  }, [chatId]);

  const open = (id: string | null) => navigate(`/o/${orgId}/kb/${kbId}/playground${id ? `?chat=${id}` : ""}`);
  const update = (f: (t: Turn) => Turn) => setTurns((cur) => [...cur.slice(0, -1), f(cur[cur.length - 1])]);

  const ask = async (question: string) => {
    if (!question.trim() || !tenantId || !model) return;
    setError(null);
    setFollowUps([]);
    setText("");
    let id = chatId;
    try {
      if (!id) {
        id = newId();
        await unwrap(api.POST("/api/v1/chats", { body: { id, tenant_id: tenantId, knowledge_base_id: kbId, model, agent_mode: mode, title: question.slice(0, 80) } }));
        streamingFor.current = id;
        open(id);
      }
    } catch (e) {
      setError(e);
      setText(question);
      return;
    }
    streamingFor.current = id;
    const now = Date.now().toString(36);
    setTurns((cur) => [...cur, { id: `u${now}`, role: "user", content: question, sources: [], steps: [], status: "complete" }, { id: `a${now}`, role: "assistant", content: "", sources: [], steps: [], status: "streaming" }]);
    setStreaming(true);
    abort.current = new AbortController();
    try {
      await streamAnswer(id, { content: question, model, agent_mode: mode }, abort.current.signal, update);
      try {
        const f = await unwrap(api.POST("/api/v1/chats/follow-up-questions", { body: { knowledge_base_id: kbId, chat_id: id } }));
        setFollowUps(f.questions);
      } catch (e) {
        // The answer stands; say why there are no suggestions.
        setError(new Error(`No follow-up questions: ${(e as Error).message}`));
      }
    } catch (e) {
      if ((e as Error).name !== "AbortError") update((t) => ({ ...t, status: "error", error: (e as Error).message }));
      else update((t) => ({ ...t, status: t.status === "streaming" ? "partial" : t.status }));
    } finally {
      setStreaming(false);
      streamingFor.current = null;
      void qc.invalidateQueries({ queryKey: chatsKey });
      void qc.invalidateQueries({ queryKey: ["messages", id] });
    }
  };
  const stop = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/chats/{id}/stop", { params: { path: { id: chatId! } } })),
    // The server ends the stream with the partial answer saved; if it cannot be reached, stop reading.
    onError: () => abort.current?.abort(),
  });

  return (
    <>
      <KbHeader orgId={orgId} kbId={kbId} page="Playground" />
      <div className="playground">
        <aside className="chat-list" aria-label="Chats">
          <Button variant="primary" onClick={() => open(null)} disabled={streaming}>New chat</Button>
          {chats.isLoading && <Loading />}
          <ul>
            {chats.data?.chats.map((c: Schemas["Chat"]) => (
              <li key={c.id}>
                <a href={`/console/o/${orgId}/kb/${kbId}/playground?chat=${c.id}`} aria-current={c.id === chatId ? "page" : undefined} onClick={(e) => (e.preventDefault(), !streaming && open(c.id))}>
                  {c.title || "Untitled chat"}
                </a>
              </li>
            ))}
          </ul>
        </aside>
        <section className="conversation" aria-label="Conversation">
          {chat && <ChatActions chat={chat} onForked={(id) => (void qc.invalidateQueries({ queryKey: chatsKey }), open(id))} onChanged={() => void qc.invalidateQueries({ queryKey: chatsKey })} />}
          <ErrorNote error={error ?? models.error ?? chats.error ?? history.error} />
          {!turns.length && !history.isLoading && (
            <Empty title="Ask a question about this knowledge base.">
              <p>Answers cite the passages they use: open a [n] to read it. Quick mode answers in one pass; deep mode plans, searches again and may use tools.</p>
            </Empty>
          )}
          <ol className="turns" aria-live="polite" aria-busy={streaming}>
            {turns.map((t) => <TurnView key={t.id} turn={t} />)}
          </ol>
          {followUps.length > 0 && (
            <div className="follow-ups">
              <h3>Follow-up questions</h3>
              {followUps.map((q) => <Button key={q} onClick={() => void ask(q)}>{q}</Button>)}
            </div>
          )}
          <form className="composer" onSubmit={(e) => (e.preventDefault(), void ask(text))}>
            <label htmlFor="question" className="sr-only">Question</label>
            <textarea id="question" rows={3} placeholder="Ask about your documents…" value={text} onChange={(e) => setText(e.target.value)} onKeyDown={(e) => e.key === "Enter" && !e.shiftKey && (e.preventDefault(), void ask(text))} />
            <div className="composer-bar">
              <Select label="Mode" value={mode} onChange={(e) => setMode(e.target.value as Mode)} options={[{ value: "quick", label: "Quick" }, { value: "deep", label: "Deep" }]} />
              <Select label="Model" value={model} onChange={(e) => setModel(e.target.value)} options={available.map((m) => ({ value: m.id, label: m.display_name }))} />
              {streaming ? (
                <Button variant="danger" onClick={() => stop.mutate()} busy={stop.isPending}>Stop</Button>
              ) : (
                <Button type="submit" variant="primary" disabled={!text.trim() || !model}>Ask</Button>
              )}
            </div>
          </form>
        </section>
      </div>
    </>
  );
}

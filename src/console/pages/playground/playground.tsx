import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, unwrap } from "../../api/client";
import { navigate, useLocation } from "../../router";
import { Button, Empty, ErrorNote, Loading, Pager, Select } from "../../ui/ui";
import { KbHeader, useKnowledgeBase } from "../kb-header";
import { TurnView } from "./answer";
import { ChatActions } from "./chat-actions";
import { useConversation, type Mode } from "./use-conversation";
import { ToolsPanel, type ToolChoice } from "./tools-panel";

const CHATS_PAGE = 50;

function useModels() {
  return useQuery({ queryKey: ["models"], queryFn: () => unwrap(api.GET("/api/v1/chats/models")), staleTime: 60_000 });
}

function ChatList({ orgId, kbId, tenantId, chatId, disabled, open }: { orgId: string; kbId: string; tenantId?: string; chatId: string | null; disabled: boolean; open: (id: string | null) => void }) {
  const [offset, setOffset] = useState(0);
  const chats = useQuery({
    queryKey: ["chats", kbId, offset],
    enabled: !!tenantId,
    queryFn: () => unwrap(api.GET("/api/v1/chats", { params: { query: { tenant_id: tenantId!, knowledge_base_id: kbId, limit: CHATS_PAGE, offset } } })),
  });
  return (
    <aside className="chat-list" aria-label="Chats">
      <Button variant="primary" onClick={() => open(null)} disabled={disabled}>New chat</Button>
      {chats.isLoading && <Loading />}
      <ErrorNote error={chats.error} />
      <ul>
        {chats.data?.chats.map((c) => (
          <li key={c.id}>
            <a href={`/console/o/${orgId}/kb/${kbId}/playground?chat=${c.id}`} aria-current={c.id === chatId ? "page" : undefined} onClick={(e) => (e.preventDefault(), !disabled && open(c.id))}>
              {c.title || "Untitled chat"}
            </a>
          </li>
        ))}
      </ul>
      {chats.data && <Pager total={chats.data.total} limit={CHATS_PAGE} offset={offset} onChange={setOffset} what="chats" />}
    </aside>
  );
}

/** Chat with a knowledge base: quick or deep, streamed, with citations, tool events, stop, follow-ups, sharing and forking. */
export default function Playground({ orgId, kbId }: { orgId: string; kbId: string }) {
  const qc = useQueryClient();
  const kb = useKnowledgeBase(kbId);
  const chatId = useLocation().search.get("chat");
  const models = useModels();
  const available = models.data?.models.filter((m) => m.available) ?? [];
  const [model, setModel] = useState("");
  const [mode, setMode] = useState<Mode>("quick");
  const [text, setText] = useState("");
  const [tools, setTools] = useState<ToolChoice>({ mcpServerIds: [], delegateIds: [] });
  const open = (id: string | null) => navigate(`/o/${orgId}/kb/${kbId}/playground${id ? `?chat=${id}` : ""}`);
  const talk = useConversation({ kbId, tenantId: kb.data?.tenant_id, chatId, open });
  const chat = talk.history.data?.chat;
  useEffect(() => {
    if (!model && available.length) setModel(available[0].id);
  }, [available, model]);
  // The newest answer (and the box to ask the next question) stays in view as the conversation grows.
  const last = talk.turns.at(-1);
  useEffect(() => {
    if (last) document.querySelector(".composer")?.scrollIntoView({ block: "nearest" });
  }, [last, talk.followUps.length]);
  const ask = async (question: string) => {
    if (!question.trim() || !kb.data || !model || talk.streaming) return;
    setText("");
    if (!(await talk.ask(question, model, mode, tools))) setText(question);
  };
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: ["chats", kbId] });
    void qc.invalidateQueries({ queryKey: ["messages", chatId] });
  };
  return (
    <>
      <KbHeader orgId={orgId} kbId={kbId} page="Playground" />
      <div className="playground">
        <ChatList orgId={orgId} kbId={kbId} tenantId={kb.data?.tenant_id} chatId={chatId} disabled={talk.streaming} open={open} />
        <section className="conversation" aria-label="Conversation">
          {chat && <ChatActions chat={chat} onForked={(id) => (refresh(), open(id))} onChanged={refresh} />}
          <ErrorNote error={talk.error ?? models.error ?? talk.history.error} />
          {!talk.turns.length && !talk.history.isLoading && (
            <Empty title="Ask a question about this knowledge base.">
              <p>Answers cite the passages they use: open a [n] to read it. Quick mode answers in one pass; deep mode plans, searches again and may use tools.</p>
            </Empty>
          )}
          <ol className="turns" aria-live="polite" aria-busy={talk.streaming}>
            {talk.turns.map((t) => <TurnView key={t.id} turn={t} />)}
          </ol>
          {talk.followUps.length > 0 && (
            <div className="follow-ups">
              <h3>Follow-up questions</h3>
              {talk.followUps.map((q) => <Button key={q} onClick={() => void ask(q)}>{q}</Button>)}
            </div>
          )}
          <form className="composer" onSubmit={(e) => (e.preventDefault(), void ask(text))}>
            <label htmlFor="question" className="sr-only">Question</label>
            <textarea id="question" rows={3} placeholder="Ask about your documents…" value={text} onChange={(e) => setText(e.target.value)} onKeyDown={(e) => e.key === "Enter" && !e.shiftKey && (e.preventDefault(), void ask(text))} />
            <ToolsPanel orgId={orgId} kbId={kbId} chatId={chatId} choice={tools} set={setTools} />
            <div className="composer-bar">
              <Select label="Mode" value={mode} onChange={(e) => setMode(e.target.value as Mode)} options={[{ value: "quick", label: "Quick" }, { value: "deep", label: "Deep" }]} />
              <Select label="Model" value={model} onChange={(e) => setModel(e.target.value)} options={available.map((m) => ({ value: m.id, label: m.display_name }))} />
              {talk.streaming ? (
                <Button variant="danger" onClick={() => talk.stop.mutate()} busy={talk.stop.isPending}>Stop</Button>
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

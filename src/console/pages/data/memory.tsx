import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useState } from "react";
import { api, unwrap } from "../../api/client";
import { navigate } from "../../router";
import { useScope } from "../../session";
import { Button, confirmed, Empty, ErrorNote, Field, Loading, Notice, PageHeader, Pager, Select, formatDate } from "../../ui/ui";
import { useKnowledgeBases } from "../knowledge-bases";
import { deleteMemory, listMemories, memoryGraph, type Memory, type MemoryGraph, type Space } from "./memory-api";
import { memoriesOfNode } from "./memory-select";
import { MemorySettings } from "./memory-settings";

// The graph library loads with the graph.
const MemoryGraphView = lazy(() => import("./memory-graph"));
const LIMIT = 50;
/** Memories change as chats run: the page refreshes on its own. */
const LIVE_MS = 10_000;

function SourceChat({ orgId, chatId }: { orgId: string; chatId: string }) {
  const open = useMutation({
    mutationFn: () => unwrap(api.GET("/api/v1/chats/{id}/messages", { params: { path: { id: chatId }, query: { limit: 1 } } })),
    onSuccess: ({ chat }) => navigate(`/o/${orgId}/kb/${chat.knowledge_base_id}/playground?chat=${chat.id}`),
  });
  return (
    <>
      <Button variant="ghost" busy={open.isPending} onClick={() => open.mutate()} title={`Open the chat this memory came from (${chatId})`}>
        Source chat
      </Button>
      <ErrorNote error={open.error} />
    </>
  );
}

function MemoryRows({ orgId, space, memories }: { orgId: string; space: Space; memories: Memory[] }) {
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: (id: string) => deleteMemory(space, id),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ["memories", space.kind, space.id] }),
  });
  return (
    <>
      <ErrorNote error={remove.error} />
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Memories">
        <table className="table">
          <thead>
            <tr><th scope="col">Memory</th><th scope="col">Kind</th><th scope="col">End user</th><th scope="col">Updated</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
          </thead>
          <tbody>
            {memories.map((m) => (
              <tr key={m.id}>
                <td className="wrap">{m.content}{m.entities.length > 0 && <><br /><span className="muted small">{m.entities.join(" · ")}</span></>}</td>
                <td>{m.kind}</td>
                <td><code className="nowrap">{m.subject_id}</code></td>
                <td className="nowrap">{formatDate(m.updated_at)}</td>
                <td>
                  <div className="row">
                    {m.source_chat_id && <SourceChat orgId={orgId} chatId={m.source_chat_id} />}
                    <Button variant="ghost" busy={remove.isPending && remove.variables === m.id} onClick={() => confirmed("Delete this memory? The assistant will no longer use it.") && remove.mutate(m.id)}>Delete</Button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** The graph, and the memories of the node clicked in it (or of its entity button). */
function GraphSection({ graph, node, setNode, memories, loading }: { graph: MemoryGraph; node: string | null; setNode: (id: string | null) => void; memories: Memory[] | null; loading: boolean }) {
  const nodeName = graph.nodes.find((n) => n.id === node)?.name;
  const ofNode = node && memories ? memoriesOfNode(graph, node, memories) : null;
  return (
    <div className="split">
      <Suspense fallback={<Loading what="Drawing the graph" />}>
        <MemoryGraphView key={JSON.stringify(graph)} graph={graph} onSelect={setNode} />
      </Suspense>
      <section aria-labelledby="entity-heading">
        <h3 id="entity-heading">{nodeName ? `Memories about ${nodeName}` : "Entities"}</h3>
        {!node && <p className="muted">Click a node in the graph, or an entity here, to see its memories.</p>}
        <ul className="row entity-list" aria-label="Entities">
          {graph.nodes.map((n) => (
            <li key={n.id}>
              <Button aria-pressed={node === n.id} onClick={() => setNode(node === n.id ? null : n.id)}>{n.name} ({n.memory_count})</Button>
            </li>
          ))}
        </ul>
        {node && loading && <Loading />}
        {ofNode && <ul data-testid="node-memories">{ofNode.map((m) => <li key={m.id}>{m.content}</li>)}</ul>}
        {ofNode && !ofNode.length && <p className="muted">No memory of this entity is visible to you.</p>}
      </section>
    </div>
  );
}

function useSpace(orgId: string) {
  const scope = useScope(orgId);
  const kbs = useKnowledgeBases(scope.tenantId);
  const [pick, setPick] = useState("tenant");
  const kb = (kbs.data?.knowledge_bases ?? []).find((k) => `kb:${k.id}` === pick);
  const space: Space | null = kb ? { kind: "kb", id: kb.id } : scope.tenantId ? { kind: "tenant", id: scope.tenantId } : null;
  const options = [
    { value: "tenant", label: "The tenant's durable memory" },
    ...(kbs.data?.knowledge_bases ?? []).map((k) => ({ value: `kb:${k.id}`, label: `Kept in ${k.name}${k.kbMemoryMode === "kb_restricted" ? "" : " (memory not kept there)"}` })),
  ];
  return { scope, space, pick, setPick, options };
}

/** Memory: the tenant's settings, its memories with their source chats, and the entity graph. */
export default function MemoryPage({ orgId }: { orgId: string }) {
  const { scope, space, pick, setPick, options } = useSpace(orgId);
  const [offset, setOffset] = useState(0);
  const [q, setQ] = useState("");
  const [who, setWho] = useState("");
  const [node, setNode] = useState<string | null>(null);
  const filters = { q: q.trim() || undefined, external_subject_id: who.trim() || undefined };
  const key = ["memories", space?.kind, space?.id];
  const list = useQuery({ queryKey: [...key, "list", offset, filters], enabled: !!space, refetchInterval: LIVE_MS, queryFn: () => listMemories(space!, { limit: LIMIT, offset, ...filters }) });
  const graph = useQuery({ queryKey: [...key, "graph", filters.external_subject_id], enabled: !!space, refetchInterval: LIVE_MS, queryFn: () => memoryGraph(space!, { external_subject_id: filters.external_subject_id }) });
  // The memories of the clicked node come from the whole space (up to 200), not just this page of the list.
  const all = useQuery({ queryKey: [...key, "all", filters.external_subject_id], enabled: !!space && !!node, queryFn: () => listMemories(space!, { limit: 200, offset: 0, external_subject_id: filters.external_subject_id }) });
  const data = list.data;
  const memories = data?.memories ?? null;
  return (
    <>
      <PageHeader title="Memory" />
      <p>What the assistant remembers about each end user, where it came from, and how the things it remembers relate.</p>
      <div className="scope-bar">
        <Select label="Environment" value={scope.envId ?? ""} options={scope.envs.map((e) => ({ value: e.id, label: e.name }))} onChange={(e) => scope.setEnv(e.target.value)} />
        <Select label="Tenant" value={scope.tenantId ?? ""} options={scope.tenants.map((t) => ({ value: t.id, label: t.name }))} onChange={(e) => (scope.setTenant(e.target.value), setPick("tenant"))} />
        <Select label="Memories" value={pick} options={options} onChange={(e) => (setPick(e.target.value), setNode(null), setOffset(0))} />
        <Field label="Words in the memory" type="search" value={q} onChange={(e) => (setQ(e.target.value), setOffset(0))} />
        <Field label="End user (external_subject_id)" value={who} onChange={(e) => (setWho(e.target.value), setOffset(0), setNode(null))} />
      </div>
      <ErrorNote error={scope.error} />
      <ErrorNote error={list.error ?? graph.error ?? all.error} />
      {list.isLoading && <Loading what="Loading memories" />}
      {data?.disabled && <Notice>Durable memory is off for this tenant: turn it on in the settings below to keep memories.</Notice>}
      {data && memories === null && <Notice>This knowledge base does not keep memories of its own (its memory setting is not “Kept inside this knowledge base”).</Notice>}
      <h2>Graph</h2>
      {graph.data && graph.data.nodes.length === 0 && <Empty title="No entities yet."><p>The graph grows as end users tell the assistant things to remember (“Remember that my project code is ZEBRA-42”).</p></Empty>}
      {graph.data && graph.data.nodes.length > 0 && <GraphSection graph={graph.data} node={node} setNode={setNode} memories={all.data?.memories ?? null} loading={all.isLoading} />}
      <h2>Memories</h2>
      {memories && memories.length === 0 && !data?.disabled && <Empty title="No memories match." />}
      {space && memories && memories.length > 0 && <MemoryRows orgId={orgId} space={space} memories={memories} />}
      {data && memories && <Pager total={data.total} limit={LIMIT} offset={offset} onChange={setOffset} what="memories" />}
      {scope.tenantId && <MemorySettings tenantId={scope.tenantId} />}
    </>
  );
}

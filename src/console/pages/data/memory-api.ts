import { api, unwrap, type Schemas } from "../../api/client";

export type Memory = Schemas["Memory"];
export type MemoryGraph = Schemas["MemoryGraph"];

/** Where memories are kept: the tenant's durable memory, or one knowledge base (kbMemoryMode kb_restricted). */
export type Space = { kind: "tenant"; id: string } | { kind: "kb"; id: string };

export interface ListQuery {
  limit: number;
  offset: number;
  q?: string;
  external_subject_id?: string;
}

/** A page of memories; `memories: null` when a knowledge base keeps none of its own, `disabled` when durable memory is off. */
export interface MemoryPage {
  memories: Memory[] | null;
  total: number;
  disabled: boolean;
}

export async function listMemories(space: Space, query: ListQuery): Promise<MemoryPage> {
  const params = { path: { id: space.id }, query };
  const r =
    space.kind === "tenant"
      ? await unwrap(api.GET("/api/v1/tenants/{id}/memories", { params }))
      : await unwrap(api.GET("/api/v1/knowledge-bases/{id}/memories", { params }));
  // The knowledge base's answer is a union whose generated type is loose: `{memories: null}` or the list.
  const page = r as { memories: Memory[] | null; total?: number; disabled?: boolean };
  if (!page.memories) return { memories: null, total: 0, disabled: false };
  return { memories: page.memories, total: page.total ?? page.memories.length, disabled: !!page.disabled };
}

export function memoryGraph(space: Space, query: { external_subject_id?: string }): Promise<MemoryGraph> {
  const params = { path: { id: space.id }, query };
  return space.kind === "tenant"
    ? unwrap(api.GET("/api/v1/tenants/{id}/memories/graph", { params }))
    : unwrap(api.GET("/api/v1/knowledge-bases/{id}/memories/graph", { params }));
}

export function deleteMemory(space: Space, memoryId: string) {
  const params = { path: { id: space.id, memoryId } };
  return space.kind === "tenant"
    ? unwrap(api.DELETE("/api/v1/tenants/{id}/memories/{memoryId}", { params }))
    : unwrap(api.DELETE("/api/v1/knowledge-bases/{id}/memories/{memoryId}", { params }));
}

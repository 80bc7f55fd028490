// Types only, from the generated schema (not the client), so that Worker-side tests can import this file.
import type { components } from "../../api/schema";

type Memory = components["schemas"]["Memory"];
type MemoryGraph = components["schemas"]["MemoryGraph"];

/** The memories a graph node stands for: those whose edges touch it, or that name its entity. */
export function memoriesOfNode(graph: MemoryGraph, nodeId: string, memories: Memory[]): Memory[] {
  const node = graph.nodes.find((n) => n.id === nodeId);
  const ids = new Set(graph.edges.filter((e) => e.source === nodeId || e.target === nodeId).map((e) => e.memory_id));
  const name = node?.name.toLowerCase();
  return memories.filter((m) => ids.has(m.id) || (name !== undefined && m.entities.some((e) => e.toLowerCase() === name)));
}

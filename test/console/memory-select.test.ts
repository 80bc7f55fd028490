import { describe, expect, it } from "vitest";
import { memoriesOfNode } from "../../src/console/pages/data/memory-select";

/** The memory page: which memories a clicked node of the entity graph stands for. */
const memory = (id: string, content: string, entities: string[]) => ({
  id,
  subject_id: "user:u1",
  content,
  kind: "fact" as const,
  knowledge_base_id: null,
  source_chat_id: "c1",
  source_message_id: "m1",
  entities,
  created_at: "2026-11-26T00:00:00.000Z",
  updated_at: "2026-11-26T00:00:00.000Z",
});

describe("the memories of a graph node", () => {
  const memories = [memory("mem_1", "My project code is ZEBRA-42.", ["User", "ZEBRA-42"]), memory("mem_2", "I work at Acme Corp.", ["User", "Acme Corp"]), memory("mem_3", "I like tea.", ["user", "Tea"])];
  const graph = {
    nodes: [
      { id: "n_user", name: "User", type: "person", memory_count: 3 },
      { id: "n_zebra", name: "ZEBRA-42", type: "code", memory_count: 1 },
      { id: "n_acme", name: "Acme Corp", type: "organization", memory_count: 1 },
    ],
    edges: [
      { id: "e1", source: "n_user", target: "n_zebra", relation: "project code", memory_id: "mem_1" },
      { id: "e2", source: "n_user", target: "n_acme", relation: "works at", memory_id: "mem_2" },
    ],
  };

  it("are those whose edges touch it, or that name its entity (case aside)", () => {
    expect(memoriesOfNode(graph, "n_zebra", memories).map((m) => m.id)).toEqual(["mem_1"]);
    expect(memoriesOfNode(graph, "n_acme", memories).map((m) => m.id)).toEqual(["mem_2"]);
    // The user: two memories by their edges, the third by naming the entity only.
    expect(memoriesOfNode(graph, "n_user", memories).map((m) => m.id)).toEqual(["mem_1", "mem_2", "mem_3"]);
  });

  it("are none for a node that is not in the graph or that no visible memory names", () => {
    expect(memoriesOfNode(graph, "n_gone", memories)).toEqual([]);
    expect(memoriesOfNode({ ...graph, edges: [] }, "n_zebra", [memories[1]])).toEqual([]);
  });
});

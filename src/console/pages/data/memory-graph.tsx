import { Background, Controls, ReactFlow, useReactFlow, type Edge, type Node } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useEffect, useMemo, useRef, type RefObject } from "react";
import type { MemoryGraph } from "./memory-api";

/**
 * Positions on circles around the most connected node (the user, usually): rings of growing radius, so
 * labels do not overlap for the graphs memory makes (tens of entities per subject).
 */
function layout(graph: MemoryGraph): Map<string, { x: number; y: number }> {
  const degree = new Map<string, number>();
  for (const e of graph.edges) for (const id of [e.source, e.target]) degree.set(id, (degree.get(id) ?? 0) + 1);
  const nodes = [...graph.nodes].sort((a, b) => (degree.get(b.id) ?? 0) - (degree.get(a.id) ?? 0) || a.name.localeCompare(b.name));
  const pos = new Map<string, { x: number; y: number }>();
  if (!nodes.length) return pos;
  pos.set(nodes[0].id, { x: 0, y: 0 });
  let i = 1;
  for (let ring = 1; i < nodes.length; ring++) {
    const slots = 8 * ring;
    const radius = 190 * ring;
    const count = Math.min(slots, nodes.length - i);
    for (let k = 0; k < count; k++, i++) {
      const a = (2 * Math.PI * k) / count - Math.PI / 2;
      pos.set(nodes[i].id, { x: Math.round(radius * Math.cos(a)), y: Math.round(radius * 0.7 * Math.sin(a)) });
    }
  }
  return pos;
}

/** Fits the graph to its box again when the box changes size (a phone turned, a window resized). */
function FitOnResize({ box }: { box: RefObject<HTMLDivElement | null> }) {
  const flow = useReactFlow();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => void flow.fitView({ padding: 0.2 }));
    ro.observe(el);
    return () => ro.disconnect();
  }, [box, flow]);
  return null;
}

/** The entity graph of memories (@xyflow/react): click a node to see its memories (the page lists the entities as buttons too). */
export default function MemoryGraphView({ graph, onSelect }: { graph: MemoryGraph; onSelect: (id: string | null) => void }) {
  const { nodes, edges } = useMemo(() => {
    const pos = layout(graph);
    const nodes: Node[] = graph.nodes.map((n) => ({
      id: n.id,
      position: pos.get(n.id) ?? { x: 0, y: 0 },
      data: { label: `${n.name} (${n.memory_count})` },
      ariaLabel: `${n.name}, ${n.type}, ${n.memory_count} ${n.memory_count === 1 ? "memory" : "memories"}`,
      connectable: false,
    }));
    const edges: Edge[] = graph.edges.map((e) => ({ id: e.id, source: e.source, target: e.target, label: e.relation, type: "straight" }));
    return { nodes, edges };
  }, [graph]);
  const box = useRef<HTMLDivElement>(null);
  return (
    <div ref={box} className="graph" role="group" aria-label="Memory graph: entities and how they relate">
      <ReactFlow
        defaultNodes={nodes}
        defaultEdges={edges}
        fitView
        fitViewOptions={{ padding: 0.2 }}
        nodesConnectable={false}
        onNodeClick={(_, n) => onSelect(n.id)}
        onPaneClick={() => onSelect(null)}
        minZoom={0.2}
      >
        <Background />
        <Controls showInteractive={false} />
        <FitOnResize box={box} />
      </ReactFlow>
    </div>
  );
}

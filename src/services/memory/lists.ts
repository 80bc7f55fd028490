import { sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Memory } from "../../db/schema";
import { fromRow, type MemoryRow } from "./memories";
import { matchWords } from "./rules";

/** What the memories API lists and draws: a space's memories filtered by subject and words, and their graph. */

export interface MemoryFilter {
  tenantId: string;
  /** null: durable memories (no knowledge base). */
  knowledgeBaseId: string | null;
  /** Only this subject (the caller's own, or a filter). */
  subjectId?: string | null;
  q?: string | null;
}

function filterSql(f: MemoryFilter): SQL {
  return sql`m.tenant_id = ${f.tenantId}
    AND ${f.knowledgeBaseId ? sql`m.knowledge_base_id = ${f.knowledgeBaseId}` : sql`m.knowledge_base_id IS NULL`}
    ${f.subjectId != null ? sql`AND m.subject_id = ${f.subjectId}` : sql``}`;
}

/** `q`: every content word must appear (quoted tokens only: no FTS5 syntax reaches MATCH). */
function qExpression(q: string): string | null {
  const terms = matchWords(q);
  return terms.length ? terms.map((t) => `"${t}"`).join(" AND ") : null;
}

export async function listMemories(db: Database, f: MemoryFilter, page: { limit: number; offset: number }) {
  const q = f.q?.trim() ? qExpression(f.q) : null;
  if (f.q?.trim() && !q) return { rows: [] as Memory[], total: 0 };
  const from = q
    ? sql`(SELECT rowid FROM memories_fts WHERE memories_fts MATCH ${`content : (${q})`}) f CROSS JOIN memories m ON m.seq = f.rowid`
    : sql`memories m`;
  const where = filterSql(f);
  const [rows, total] = await Promise.all([
    db.all<MemoryRow>(sql`SELECT m.* FROM ${from} WHERE ${where} ORDER BY m.updated_at DESC, m.seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`),
    db.get<{ n: number }>(sql`SELECT count(*) AS n FROM ${from} WHERE ${where}`),
  ]);
  return { rows: rows.map(fromRow), total: total?.n ?? 0 };
}

export interface MemoryGraph {
  nodes: Array<{ id: string; name: string; type: string; memory_count: number }>;
  edges: Array<{ id: string; source: string; target: string; relation: string; memory_id: string }>;
}

export const EMPTY_GRAPH: MemoryGraph = { nodes: [], edges: [] };
const MAX_GRAPH_MEMORIES = 2000;

/** Nodes and edges of the memories the filter selects (the same memories a list would show). */
export async function memoryGraph(db: Database, f: Omit<MemoryFilter, "q">): Promise<MemoryGraph> {
  const selected = sql`SELECT m.id FROM memories m WHERE ${filterSql(f)} ORDER BY m.updated_at DESC LIMIT ${MAX_GRAPH_MEMORIES}`;
  const [nodes, edges] = await Promise.all([
    db.all<{ id: string; name: string; type: string; memory_count: number }>(sql`
      SELECT e.id, e.name, e.type, count(*) AS memory_count
      FROM memory_entity_links l CROSS JOIN memory_entities e ON e.id = l.entity_id
      WHERE l.memory_id IN (${selected})
      GROUP BY e.id ORDER BY memory_count DESC, e.name`),
    db.all<{ id: string; source: string; target: string; relation: string; memory_id: string }>(sql`
      SELECT r.id, r.source_entity_id AS source, r.target_entity_id AS target, r.relation, r.memory_id
      FROM memory_relations r WHERE r.memory_id IN (${selected}) ORDER BY r.memory_id, r.id`),
  ]);
  return { nodes, edges };
}

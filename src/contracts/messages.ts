import type { Message } from "../db/schema";

/** A message as the API shows it (chat transcripts, turn events, turn outcomes). */
export type PublicMessage = ReturnType<typeof publicMessage>;

export interface ToolCallView {
  call_id: string;
  tool: string;
  arguments: unknown;
  is_error: boolean;
  duration_ms: number;
}

export function publicMessage(m: Message) {
  const md = m.metadata ?? {};
  return {
    id: m.id,
    chat_id: m.chatId,
    role: m.role,
    content: m.content,
    created_at: m.createdAt,
    metadata: {
      sources: md.sources ?? [],
      usage: md.usage ?? null,
      model: md.model ?? null,
      status: m.status,
      memoryUsed: md.memoryUsed ?? false,
      delegatedAgentIds: md.delegatedAgentIds ?? [],
      imageUrls: md.imageUrls ?? [],
      ...(md.attachedArtifactIds?.length ? { attachedArtifactIds: md.attachedArtifactIds } : {}),
      // The owner's operational metadata (never in shared transcripts: see sharing.ts).
      ...(Array.isArray(md.tool_calls) && md.tool_calls.length ? { tool_calls: md.tool_calls as ToolCallView[] } : {}),
      ...(Array.isArray(md.memory_ids) && md.memory_ids.length ? { memory_ids: md.memory_ids as string[] } : {}),
      ...(typeof md.run_id === "string" ? { run_id: md.run_id } : {}),
      ...(md.error ? { error: md.error } : {}),
    },
  };
}

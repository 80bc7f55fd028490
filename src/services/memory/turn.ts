import { sql } from "drizzle-orm";
import type { Passage } from "../../contracts/turn";
import { assertCanSpend, recordUsage } from "../billing/metering";
import { getModel } from "../models/registry";
import type { RecalledAhead } from "../../contracts/chat-session";
import type { AfterTurnHook, ContextProvider, TurnScope } from "../../contracts/tools";
import { extractableText, extractByRules, extractWithModel, worthAsking, type Extracted } from "./extract";
import { forgetMatching, setSourceMessage, writeMemory } from "./memories";
import { recallFrom, recallMemories, type RecalledMemory } from "./recall";
import { explicitCommands, kindOf } from "./rules";
import { memorySpaceFor, type MemorySpace } from "./settings";

/**
 * Memory in a turn, through the toolbox contract:
 *
 * - `memoryContext` (ContextProvider, before the plan): handles explicit
 *   commands in the user's message AT ONCE — "remember that …" stores (unless
 *   retention is `none`), "forget …" deletes — so the answer of the same turn
 *   can acknowledge them; then recalls the few memories of the turn's subject
 *   most relevant to the message as citable passages (document_id null,
 *   filename "Memory", memory_id). Metadata: memoryUsed, and memory_ids for the
 *   owner's copy of the message.
 * - `memoryAfterTurn` (AfterTurnHook): records the user message as the source
 *   of what was stored during the turn, and with `automatic` retention extracts
 *   durable facts, preferences and instructions from the user's own message
 *   (never from recalled memories or passages): one structured-output call
 *   with a provider model (metered as `memory`), rules with local-extractive.
 *
 * Which memory a turn uses comes from the knowledge base's kbMemoryMode and
 * the tenant's settings (./settings.ts memorySpaceFor); the subject is the
 * turn's, never anything the model says.
 */

const MEMORY_FILENAME = "Memory";
/**
 * A recalled memory is quoted as what the user said, so the answer attributes
 * it ("You told me: My project code is ZEBRA-42 [1].") and local-extractive,
 * which skips sentences of fewer than three content words, can still cite a
 * short fact ("My dentist is Dr. Alvarez.").
 */
export const MEMORY_PREFIX = "You told me: ";

export function memoryPassages(recalled: RecalledMemory[]): Passage[] {
  return recalled.map((r) => ({
    document_id: null,
    filename: MEMORY_FILENAME,
    chunk_id: null,
    text: MEMORY_PREFIX + r.memory.content,
    score: r.score,
    page: null,
    heading: null,
    url: null,
    memory_id: r.memory.id,
  }));
}

/**
 * The user message this turn answers, when already stored (its write may still be on its way: the after-turn
 * hook then sets it). Without the turn's own id, the chat's latest user message.
 */
async function currentUserMessageId(scope: TurnScope): Promise<string | null> {
  const row = await scope.db.get<{ id: string }>(
    scope.questionMessageId
      ? sql`SELECT id FROM messages WHERE id = ${scope.questionMessageId}`
      : sql`SELECT id FROM messages WHERE chat_id = ${scope.chat.id} AND role = 'user' ORDER BY seq DESC LIMIT 1`,
  );
  return row?.id ?? null;
}

const quote = (s: string) => (s.length > 200 ? s.slice(0, 199) + "…" : s);

/** Applies the explicit commands of `question`; returns the thoughts to show and the recall query. */
export async function applyCommands(scope: TurnScope, space: MemorySpace, question: string): Promise<{ thoughts: string[]; query: string }> {
  const commands = explicitCommands(question);
  const thoughts: string[] = [];
  const ctx = { env: scope.env, db: scope.db, actor: scope.actor };
  for (const phrase of commands.forget) {
    const gone = await forgetMatching(scope.db, space, phrase);
    thoughts.push(gone.length ? gone.map((m) => `Forgot: ${quote(m.content)}`).join("\n") : `Nothing remembered matches "${quote(phrase)}"`);
  }
  if (commands.remember.length) {
    if (space.retention === "none") {
      thoughts.push("Not remembered: memory retention is off for this tenant");
    } else {
      const messageId = await currentUserMessageId(scope);
      for (const content of commands.remember) {
        const { memory, created } = await writeMemory(ctx, space, {
          content,
          kind: kindOf(content),
          sourceChatId: scope.chat.id,
          sourceMessageId: messageId,
        });
        thoughts.push(`${created ? "Remembered" : "Updated memory"}: ${quote(memory.content)}`);
      }
    }
  }
  // Recall for what the message is about: what it asked to remember is acknowledged by citing it.
  const query = commands.remember.length ? commands.remember.join(" ") : question;
  return { thoughts, query };
}

/**
 * The recall's reads the Worker made ahead of the turn (src/services/chats/recall-ahead.ts), once they arrive;
 * a stopped turn does not wait for them.
 */
async function recalledAhead(scope: TurnScope, signal: AbortSignal): Promise<RecalledAhead | undefined> {
  const ahead = scope.recalledAhead;
  if (!ahead) return undefined;
  if (signal.aborted) throw signal.reason;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    ahead.then(resolve, () => resolve(undefined)).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export const memoryContext: ContextProvider = {
  name: "memory",
  async gather(scope, question, signal) {
    const space = await memorySpaceFor(scope.db, scope.kb, scope.subject, scope.memorySettings);
    if (!space) return null;
    const { thoughts, query } = await applyCommands(scope, space, question);
    const ctx = { env: scope.env, db: scope.db, actor: scope.actor };
    const ahead = thoughts.length ? undefined : await recalledAhead(scope, signal);
    const recalled =
      ahead && ahead.scopeKey === space.scopeKey && ahead.query === query
        ? await recallFrom(ctx, space, query, ahead.reads)
        : await recallMemories(ctx, space, query);
    const passages = memoryPassages(recalled);
    return {
      passages,
      thought: thoughts.length ? thoughts.join("\n") : undefined,
      metadata: { memoryUsed: passages.length > 0, memory_ids: passages.map((p) => p.memory_id!) },
    };
  },
};

/** Automatic extraction for one turn; returns the memories written. */
export async function extractAfterTurn(
  scope: TurnScope,
  space: MemorySpace,
  turn: { userMessage: { id: string; content: string }; assistantMessage: { id: string } },
): Promise<Array<{ content: string; created: boolean }>> {
  const text = extractableText(turn.userMessage.content);
  if (!text) return [];
  let found: Extracted[] = [];
  const info = getModel(scope.env, scope.chat.model);
  if (info && info.provider !== "local" && info.available) {
    if (!worthAsking(text)) return [];
    try {
      await assertCanSpend(scope.db, space.tenantId);
    } catch {
      return []; // no credits left: nothing extracted, the turn is unaffected
    }
    const r = await extractWithModel(scope.env, info, text);
    await recordUsage(scope.db, {
      organizationId: space.organizationId,
      tenantId: space.tenantId,
      operation: "memory",
      model: info.id,
      pricing: info.pricing,
      usage: r.usage,
      actor: scope.actor,
      chatId: scope.chat.id,
      messageId: turn.assistantMessage.id,
      agentRunId: scope.runId,
      // One extraction per turn, even if the hook ran twice.
      idempotencyKey: `memory:${turn.userMessage.id}`,
    });
    found = r.memories;
  } else {
    found = extractByRules(text);
  }
  const out: Array<{ content: string; created: boolean }> = [];
  for (const m of found) {
    const { memory, created } = await writeMemory({ env: scope.env, db: scope.db, actor: scope.actor }, space, {
      content: m.content,
      kind: m.kind,
      graph: m.graph,
      sourceChatId: scope.chat.id,
      sourceMessageId: turn.userMessage.id,
    });
    out.push({ content: memory.content, created });
  }
  return out;
}

export const memoryAfterTurn: AfterTurnHook = {
  name: "memory",
  async run(scope, turn, emit) {
    const space = await memorySpaceFor(scope.db, scope.kb, scope.subject, scope.memorySettings);
    if (!space) return;
    // What "remember that …" stored before the user message was written gets it as its source.
    if (explicitCommands(turn.question).remember.length) await setSourceMessage(scope.db, scope.chat.id, turn.userMessage.id);
    if (space.retention !== "automatic") return;
    const written = await extractAfterTurn(scope, space, turn);
    for (const w of written) await emit({ type: "agent_thought", content: `${w.created ? "Remembered" : "Updated memory"}: ${quote(w.content)}` });
  },
};

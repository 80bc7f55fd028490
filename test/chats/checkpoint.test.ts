import { describe, expect, it } from "vitest";
import { AnswerCheckpoint, CHECKPOINT_MS } from "../../src/services/answer/checkpoint";
import type { TurnContext } from "../../src/services/answer/context";

/**
 * Answer checkpoints (README "Crash safety", issue 28): never written on a token's path, coalesced to at most one
 * write per CHECKPOINT_MS, and none for an answer complete within CHECKPOINT_MS of its turn's start (its final
 * write saves it once). A fake D1 counts the batches.
 */
function fakeTurn() {
  const batches: unknown[][] = [];
  const statement = { bind: () => statement };
  const d1 = { prepare: () => statement, batch: async (s: unknown[]) => (batches.push(s), s.map(() => ({ results: [] }))) };
  const ctx = {
    deps: { db: { $client: d1 } },
    req: {
      chat: { id: "chat_1", organizationId: "org_1", tenantId: "ten_1" },
      model: { id: "local-extractive", pricing: { input_per_1k: 0, output_per_1k: 0 } },
      operation: "chat",
      actor: { userId: "usr_1", apiKeyId: null },
      runId: null,
    },
    used: { input_tokens: 0, output_tokens: 0 },
    ledger: { all: [] },
    contextMetadata: {},
    userWritten: () => Promise.resolve(),
  } as unknown as TurnContext;
  return { ctx, batches };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("answer checkpoints", () => {
  it("an answer complete within CHECKPOINT_MS is not checkpointed (its final write saves it)", async () => {
    const { ctx, batches } = fakeTurn();
    const checkpoint = new AnswerCheckpoint(ctx, "msg_1");
    let text = "";
    for (const word of ["Refunds ", "take ", "five ", "days."]) checkpoint.progress((text += word));
    await sleep(20);
    await checkpoint.close();
    await sleep(CHECKPOINT_MS + 50);
    expect(batches).toHaveLength(0);
  });

  it("a streaming answer is saved once per CHECKPOINT_MS, the pieces in between coalesced, never on a token's path", async () => {
    const { ctx, batches } = fakeTurn();
    const checkpoint = new AnswerCheckpoint(ctx, "msg_2");
    let text = "";
    const started = Date.now();
    while (Date.now() - started < CHECKPOINT_MS * 2 + 100) {
      const before = batches.length;
      checkpoint.progress((text += "word "));
      expect(batches.length).toBe(before); // progress() itself never writes
      await sleep(10);
    }
    await checkpoint.close();
    expect(batches.length).toBeGreaterThanOrEqual(2);
    expect(batches.length).toBeLessThanOrEqual(3);
  });
});

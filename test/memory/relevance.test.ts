import { describe, expect, it } from "vitest";
import { coversFocus, focusTerms } from "../../src/lib/question-focus";
import { NO_ANSWER } from "../../src/services/answer/extractive";
import { call, createKey, createOrg, expectStatus, type Auth } from "../helpers";
import { memoryKb, setMemorySettings } from "./memory-helpers";

/** Answers that know what they do not know (issue 24): only memories that answer the question are quoted. */

async function ask(auth: Auth, kb: { id: string; tenant_id: string }, message: string) {
  const r = await call("/chats", {
    ...auth,
    body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", agent_mode: "quick", message, external_subject_id: "dana" },
  });
  return expectStatus(r, 201).assistant_message as { content: string; metadata: { memoryUsed: boolean; memory_ids?: string[] } };
}

const MEMORIES = [
  "My dentist is Dr. Alvarez.",
  "My project code is ZEBRA-42.",
  "My favourite colour is teal.",
  "I work at Contoso as a data engineer.",
  "My daughter's name is Mia.",
  "I was born in Lisbon.",
];

describe("memory answers know what they do not know", () => {
  it("a fact never stated gets the no-answer reply, never another memory; stated facts are quoted whole", async () => {
    const org = await createOrg();
    await setMemorySettings(org, { mode: "durable", retention: "explicit_only" });
    const kb = await memoryKb(org, "subject");
    const { key } = await createKey(org, { scopes: ["query:rag", "documents:read"] });
    for (const m of MEMORIES) await ask({ key }, kb, `Remember that ${m.replace(/\.$/, "")}`);

    // Each shares a word with a memory ("name", "project", "favourite", "colour") but asks something else.
    for (const question of [
      "What is my wife's name?",
      "What is my project deadline?",
      "What is my favourite drink?",
      "What colour is my house?",
      "Where do I live?",
      "What is my blood type?",
    ]) {
      const answer = await ask({ key }, kb, question);
      expect(answer.content, question).toBe(NO_ANSWER);
      expect(answer.metadata.memoryUsed, question).toBe(false);
      for (const m of MEMORIES) expect(answer.content, question).not.toContain(m.replace(/\.$/, ""));
    }

    for (const [question, memory] of [
      ["What is my daughter's name?", "My daughter's name is Mia"],
      ["Who is my dentist?", "My dentist is Dr. Alvarez"],
      ["What is my project code?", "My project code is ZEBRA-42"],
      ["What is my favorite color?", "My favourite colour is teal"],
      ["Where do I work?", "I work at Contoso as a data engineer"],
      ["Where was I born?", "I was born in Lisbon"],
    ]) {
      const answer = await ask({ key }, kb, question);
      expect(answer.content, question).toBe(`You told me: ${memory} [1].`);
      expect(answer.metadata.memoryUsed, question).toBe(true);
      expect(answer.metadata.memory_ids, question).toHaveLength(1);
    }
  });

  it("the focus of a question: the noun asked about, the verb and its object, or every content word", () => {
    expect(focusTerms("What is my wife's name?")).toEqual(["wife", "name"]);
    expect(focusTerms("What car do I drive?")).toEqual(["car"]);
    expect(focusTerms("What kind of car do I drive?")).toEqual(["car"]);
    expect(focusTerms("Where do I live?")).toEqual(["live"]);
    expect(focusTerms("When did I start my job?")).toEqual(["start", "job"]);
    expect(focusTerms("What colour is my house?")).toEqual(["colour", "house"]);
    expect(coversFocus(focusTerms("What is my favorite color?"), "My favourite colour is teal.")).toBe(true);
    expect(coversFocus(focusTerms("When did I start my job?"), "I started my job at Contoso in 2020.")).toBe(true);
    expect(coversFocus(focusTerms("What is my son's name?"), "My daughter's name is Mia.")).toBe(false);
    expect(coversFocus([], "anything")).toBe(true);
  });
});

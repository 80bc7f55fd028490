import { describe, expect, it } from "vitest";
import { extractiveAnswer, NO_ANSWER, selectSentences } from "../../src/services/answer/extractive";
import { sentences, stem, terms } from "../../src/lib/text";

const passages = [
  {
    index: 1,
    text:
      "Refund policy. Customers can request a refund within 30 days of purchase. Refunds are paid to the original " +
      "payment method within 5 business days. Gift cards cannot be refunded.",
  },
  {
    index: 2,
    text:
      "Shipping. Orders ship within 2 business days. Express shipping costs 15 dollars. Customers can request a refund " +
      "within 30 days of purchase, as stated in the refund policy.",
  },
  { index: 3, text: "Our office dog is called Biscuit. The cafeteria opens at 8 in the morning." },
];

describe("local-extractive", () => {
  it("selects the sentences that answer the question and cites them", () => {
    const a = extractiveAnswer("How many days do I have to request a refund?", passages);
    expect(a.content).toContain("within 30 days of purchase [1].");
    expect(a.content).not.toContain("Biscuit");
    expect(a.cited).toContain(1);
    expect(a.usage.input_tokens).toBeGreaterThan(20);
    expect(a.usage.output_tokens).toBeGreaterThan(5);
  });

  it("drops sentences that repeat what is already selected", () => {
    const { picks } = selectSentences("request a refund within 30 days of purchase", passages, { maxSentences: 5 });
    const dup = picks.filter((p) => /request a refund within 30 days/.test(p.text));
    expect(dup).toHaveLength(1);
  });

  it("says so when nothing matches", () => {
    expect(extractiveAnswer("What is the capital of Mongolia?", passages).content).toBe(NO_ANSWER);
    expect(extractiveAnswer("refund", []).content).toBe(NO_ANSWER);
  });

  it("text utilities: stemming, stopwords, sentence splitting", () => {
    expect(stem("refunds")).toBe(stem("refund"));
    expect(stem("shipping")).toBe("ship");
    expect(terms("What are the refund policies?")).toEqual(["refund", "policy"]);
    expect(sentences("One sentence here. Two here!\n- bullet item\n- another item")).toEqual(["One sentence here.", "Two here!", "bullet item", "another item"]);
  });
});

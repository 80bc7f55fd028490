import { describe, expect, it } from "vitest";
import { decompose } from "../../src/services/answer/plan";

describe("deep-mode decomposition", () => {
  it("splits several questions, comparisons and independent asks", () => {
    expect(decompose("How long do refunds take? And when is the support desk open?")).toEqual([
      "How long do refunds take",
      "When is the support desk open",
    ]);
    expect(decompose("Compare the premium plan with the basic plan")).toEqual(["The premium plan", "The basic plan"]);
    expect(decompose("What is the refund policy; what are the shipping costs")).toEqual(["What is the refund policy", "What are the shipping costs"]);
    expect(decompose("What is the refund policy?")).toEqual(["What is the refund policy"]);
    expect(decompose("Tell me about cats and dogs")).toEqual(["Tell me about cats and dogs"]);
    expect(decompose("a? b? c? d? e? f?").length).toBeLessThanOrEqual(4);
    expect(decompose("   ")).toEqual([]);
  });
});

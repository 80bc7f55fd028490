import { describe, expect, it } from "vitest";
import { dedupeKey, durableStatements, explicitCommands, graphOf, kindOf, sentences, similarity } from "../../src/services/memory/rules";

describe("memory rules", () => {
  it("finds explicit commands in any sentence, and nothing in ordinary messages", () => {
    expect(explicitCommands("Remember that my project code is ZEBRA-42")).toEqual({ remember: ["My project code is ZEBRA-42."], forget: [] });
    expect(explicitCommands("Hi! Please remember: I take my coffee black. Thanks")).toEqual({ remember: ["I take my coffee black."], forget: [] });
    expect(explicitCommands("Forget my project code. Remember that my code is KOALA-7.")).toEqual({ remember: ["My code is KOALA-7."], forget: ["my project code"] });
    expect(explicitCommands("Don't forget that Dr. Alvarez is my dentist")).toEqual({ remember: ["Dr. Alvarez is my dentist."], forget: [] });
    for (const plain of ["What is my project code?", "I can't remember the refund policy", "How do I forget a saved card?", "Notes on shipping"]) {
      expect(explicitCommands(plain), plain).toEqual({ remember: [], forget: [] });
    }
  });

  it("splits sentences without breaking abbreviations or initials", () => {
    expect(sentences("My dentist is Dr. Alvarez. I live in St. Ives! Is J. Smith here?\nok")).toEqual([
      "My dentist is Dr. Alvarez.",
      "I live in St. Ives!",
      "Is J. Smith here?",
      "ok",
    ]);
  });

  it("keys restatements by what they are about", () => {
    expect(dedupeKey("My project code is ZEBRA-42.")).toBe(dedupeKey("my project code is now KOALA-7"));
    expect(dedupeKey("My project code is ZEBRA-42.")).not.toBe(dedupeKey("My dentist is Dr. Alvarez."));
    expect(dedupeKey("Call me Ada.")).toBe(dedupeKey("My name is Ada Lovelace."));
    expect(similarity("I prefer short answers.", "I prefer answers that are short.")).toBeGreaterThanOrEqual(0.75);
    expect(similarity("I prefer short answers.", "I prefer long answers.")).toBeLessThan(0.75);
  });

  it("classifies kinds and extracts durable statements only", () => {
    expect(kindOf("Always answer in French.")).toBe("instruction");
    expect(kindOf("I prefer tea.")).toBe("preference");
    expect(kindOf("My badge is 77.")).toBe("fact");
    expect(
      durableStatements("Hi there. I work at Acme Corp. My badge is 77. What is the refund policy? I prefer short answers. The weather is nice. Always cite sources."),
    ).toEqual([
      { content: "I work at Acme Corp.", kind: "fact" },
      { content: "My badge is 77.", kind: "fact" },
      { content: "I prefer short answers.", kind: "preference" },
      { content: "Always cite sources.", kind: "instruction" },
    ]);
    expect(durableStatements("Remember that my code is X-1. Is my badge 77?")).toEqual([]);
  });

  it("builds entities and relations", () => {
    expect(graphOf("My project code is ZEBRA-42.")).toEqual({
      entities: [
        { name: "User", type: "person" },
        { name: "ZEBRA-42", type: "identifier" },
      ],
      relations: [{ source: "User", target: "ZEBRA-42", relation: "project code" }],
    });
    const g = graphOf("I work at Acme Corp with Dana Scully.");
    expect(g.entities.map((e) => e.name)).toEqual(["User", "Acme Corp with Dana Scully"]);
    const h = graphOf("The Leeds office opens at 9.");
    expect(h.relations).toEqual([]);
    expect(h.entities.map((e) => e.name)).toEqual(["Leeds"]);
    expect(graphOf("My locker number is 815.").relations).toEqual([{ source: "User", target: "815", relation: "locker number" }]);
  });
});

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ftsTerms, porterStem, words } from "../../src/services/retrieval/tokenize";

/** The terms D1's FTS5 (`porter unicode61`, as in migrations/0003) indexes for each text. */
async function d1Terms(texts: string[]): Promise<string[][]> {
  const table = `tok_${Math.random().toString(36).slice(2, 8)}`;
  await env.DB.prepare(`CREATE VIRTUAL TABLE ${table} USING fts5(x, tokenize='porter unicode61')`).run();
  await env.DB.prepare(`CREATE VIRTUAL TABLE ${table}_v USING fts5vocab(${table}, 'instance')`).run();
  try {
    await env.DB.batch(texts.map((t, i) => env.DB.prepare(`INSERT INTO ${table} (rowid, x) VALUES (?, ?)`).bind(i + 1, t)));
    const { results } = await env.DB.prepare(`SELECT term, doc, offset FROM ${table}_v ORDER BY doc, offset`).all<{ term: string; doc: number; offset: number }>();
    const out: string[][] = texts.map(() => []);
    for (const r of results) out[r.doc - 1][r.offset] = r.term;
    return out;
  } finally {
    await env.DB.prepare(`DROP TABLE ${table}_v`).run();
    await env.DB.prepare(`DROP TABLE ${table}`).run();
  }
}

const TEXTS = [
  "Caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky",
  "relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti",
  "triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize",
  "probate rate cease controll roll generalization generalizations studies studying agreement ational tional ization y yy ies sses ss s",
  "Naïve café Ærøskøbing straße ﬁnding µg/ml ϵ-toxin CD3ϵ σ-factor ς final Ωmega x² H₂O ½ 10,000 3.5% IL-6 T-cell p53 miRNA-21 β-catenin",
  "日本語のテキスト 中文 한국어 emoji 🎉👍 mixed-UPPER lower_snake kebab-case e.g. U.S.A. don't it's O'Neil",
  `${"a".repeat(63)} ${"b".repeat(64)} ${"ab".repeat(40)}ing ${"é".repeat(40)}ing`,
];

describe("tokenizer (FTS5 porter unicode61 in TypeScript)", () => {
  it("produces exactly the terms D1's FTS5 indexes", async () => {
    const expected = await d1Terms(TEXTS);
    TEXTS.forEach((t, i) => expect(ftsTerms(t), t).toEqual(expected[i]));
  });

  it("folds case and diacritics and splits on everything but letters and digits", () => {
    expect(words("Naïve CAFÉ, x-ray: 10,000!")).toEqual(["naive", "cafe", "x", "ray", "10", "000"]);
    expect(words('"NEAR(a b)" OR col:x*')).toEqual(["near", "a", "b", "or", "col", "x"]);
    expect(words("")).toEqual([]);
  });

  it("stems like SQLite's FTS5 porter", () => {
    expect(["running", "studies", "generalization", "caresses", "cats", "is", "sky"].map(porterStem)).toEqual([
      "run",
      "studi",
      "gener",
      "caress",
      "cat",
      "is",
      "sky",
    ]);
  });
});

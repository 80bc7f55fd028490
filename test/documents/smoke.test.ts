import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { createKb, createOrg } from "../helpers";
import { db, uploadFile, waitForDocument } from "./doc-helpers";

describe("smoke", () => {
  it("upload -> processed -> searchable", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const { id } = await uploadFile(auth, kb, { filename: "notes.md", mime: "text/markdown", body: "# Zebras\n\nZebras have black and white stripes that confuse flies.\n" });
    const doc = await waitForDocument(auth, id);
    expect(doc.status, doc.error).toBe("processed");
    const hits = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "why do zebras have stripes" });
    expect(hits[0]?.document_id).toBe(id);
  });
});

import { expect } from "vitest";
import { createKb, createOrg, type Auth } from "../helpers";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";

/** A small sales sheet: three regions, dates, amounts and units. */
export const SALES = [
  "Region,Order Date,Amount,Units,Rep",
  "North,2024-07-03,1200.50,3,Ada",
  "South,2024-07-15,800,2,Bob",
  "North,2024-08-01,300.25,1,Ada",
  "East,2024-09-30,450,5,Cy",
  "South,2024-10-02,99.99,1,Bob",
].join("\n");

/** A new organization with a knowledge base (with `fields`, e.g. prompt fields) holding one processed CSV. */
export async function kbWithCsv(csv = SALES, filename = "Sales Q3.csv", fields: Record<string, string> = {}) {
  const org = await createOrg();
  const kb = await createKb(org, fields);
  const auth: Auth = { cookie: org.owner.cookie };
  const { id } = await uploadFile(auth, kb, { filename, mime: "text/csv", body: csv });
  const doc = await waitForDocument(auth, id);
  expect(doc.status, doc.error).toBe("processed");
  return { org, kb, auth, docId: id };
}

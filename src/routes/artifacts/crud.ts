import { jsonBody, jsonContent, pageBody, pageSchema } from "../../lib/openapi";
import { ctxOf } from "../context";
import { createRouter } from "../../lib/router";
import { activeArtifactFor, artifactFor, artifactJson, changeArtifact, createArtifact, listArtifacts } from "../../services/artifacts/artifacts";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { ArtifactSchema, CreateArtifactBody, ListArtifactsQuery, UpdateArtifactBody } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Artifacts"]);

export const artifactCrudRoutes = createRouter();

const list = route("get", "/knowledge-bases/{id}/artifacts", "artifacts:read", {
  operationId: "listArtifacts", summary: "Artifacts of a knowledge base, most recently updated first",
  description: "`query` (up to 200 characters) matches title, summary or content (case-insensitive for ASCII letters).",
  request: { query: ListArtifactsQuery },
  responses: { 200: jsonContent(pageSchema("artifacts", ArtifactSchema), "Artifacts") },
});
artifactCrudRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "artifacts:read", { tenantId: q.tenant_id, tenantPath: "query.tenant_id" });
  const page = await listArtifacts(c.get("db"), kb.id, { type: q.type, query: q.query, includeStatus: q.include_status, limit: q.limit, offset: q.offset });
  return c.json(pageBody("artifacts", page, q, (a) => artifactJson(ctxOf(c), a)), 200);
});

const create = route("post", "/knowledge-bases/{id}/artifacts", "artifacts:write", {
  operationId: "createArtifact", summary: "Create a Markdown or HTML artifact (revision 1)",
  request: { body: jsonBody(CreateArtifactBody) }, responses: { 201: jsonContent(ArtifactSchema, "The artifact") },
});
artifactCrudRoutes.openapi(create, async (c) => {
  const body = c.req.valid("json");
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "artifacts:write", { tenantId: body.tenant_id });
  const artifact = await createArtifact(c.get("db"), kb, body);
  return c.json(artifactJson(ctxOf(c), artifact), 201);
});

const get = route("get", "/artifacts/{id}", "artifacts:read", {
  operationId: "getArtifact", summary: "An active artifact by id or slug (archived ones are 404)",
  responses: { 200: jsonContent(ArtifactSchema, "The artifact") },
});
artifactCrudRoutes.openapi(get, async (c) => {
  const artifact = await activeArtifactFor(ctxOf(c), c.req.valid("param").id, "artifacts:read");
  return c.json(artifactJson(ctxOf(c), artifact), 200);
});

const update = route("patch", "/artifacts/{id}", "artifacts:write", {
  operationId: "updateArtifact",
  summary: "Change title/summary, or apply 1 to 50 edits all-or-nothing; either way one new revision",
  description:
    "Send either `title`/`summary` or `edits`, not both. Edits apply in order, each to the result of the previous; " +
    "each `oldText` must occur exactly once (or at least once with `replaceAll`), otherwise 400 names the failing " +
    "edit and nothing changes. An archived artifact cannot be changed (409 `artifact_archived`).",
  request: { body: jsonBody(UpdateArtifactBody) }, responses: { 200: jsonContent(ArtifactSchema, "The artifact") },
});
artifactCrudRoutes.openapi(update, async (c) => {
  const artifact = await artifactFor(ctxOf(c), c.req.valid("param").id, "artifacts:write");
  const body = c.req.valid("json");
  const change = body.edits ? { edits: body.edits } : { title: body.title, summary: body.summary };
  const updated = await changeArtifact(c.get("db"), artifact, change);
  return c.json(artifactJson(ctxOf(c), updated), 200);
});

import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, IdParam, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import {
  activeArtifactFor,
  artifactFor,
  artifactJson,
  changeArtifact,
  createArtifact,
  listArtifacts,
} from "../../services/artifacts/artifacts";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { ArtifactSchema, CreateArtifactBody, ListArtifactsQuery, UpdateArtifactBody } from "./schemas";

const tags = ["Artifacts"];

export const artifactCrudRoutes = createRouter();

const list = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}/artifacts",
  tags,
  operationId: "listArtifacts",
  ...routePermission("artifacts:read"),
  summary: "Artifacts of a knowledge base, most recently updated first",
  description: "`query` (up to 200 characters) matches title, summary or content (case-insensitive for ASCII letters).",
  security: userOrKey,
  request: { params: IdParam, query: ListArtifactsQuery },
  responses: {
    200: jsonContent(
      z.object({ artifacts: z.array(ArtifactSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
      "Artifacts",
    ),
    ...errorResponses,
  },
});
artifactCrudRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "artifacts:read", { tenantId: q.tenant_id, tenantPath: "query.tenant_id" });
  const { rows, total } = await listArtifacts(c.get("db"), kb.id, {
    type: q.type,
    query: q.query,
    includeStatus: q.include_status,
    limit: q.limit,
    offset: q.offset,
  });
  return c.json({ artifacts: rows.map((a) => artifactJson(c, a)), total, limit: q.limit, offset: q.offset }, 200);
});

const create = createRoute({
  method: "post",
  path: "/knowledge-bases/{id}/artifacts",
  tags,
  operationId: "createArtifact",
  ...routePermission("artifacts:write"),
  summary: "Create a Markdown or HTML artifact (revision 1)",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(CreateArtifactBody) },
  responses: { 201: jsonContent(ArtifactSchema, "The artifact"), ...errorResponses },
});
artifactCrudRoutes.openapi(create, async (c) => {
  const body = c.req.valid("json");
  const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "artifacts:write", { tenantId: body.tenant_id });
  const artifact = await createArtifact(c.get("db"), kb, body);
  return c.json(artifactJson(c, artifact), 201);
});

const get = createRoute({
  method: "get",
  path: "/artifacts/{id}",
  tags,
  operationId: "getArtifact",
  ...routePermission("artifacts:read"),
  summary: "An active artifact by id or slug (archived ones are 404)",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(ArtifactSchema, "The artifact"), ...errorResponses },
});
artifactCrudRoutes.openapi(get, async (c) => {
  const artifact = await activeArtifactFor(c, c.req.valid("param").id, "artifacts:read");
  return c.json(artifactJson(c, artifact), 200);
});

const update = createRoute({
  method: "patch",
  path: "/artifacts/{id}",
  tags,
  operationId: "updateArtifact",
  ...routePermission("artifacts:write"),
  summary: "Change title/summary, or apply 1 to 50 edits all-or-nothing; either way one new revision",
  description:
    "Send either `title`/`summary` or `edits`, not both. Edits apply in order, each to the result of the previous; " +
    "each `oldText` must occur exactly once (or at least once with `replaceAll`), otherwise 400 names the failing " +
    "edit and nothing changes. An archived artifact cannot be changed (409 `artifact_archived`).",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(UpdateArtifactBody) },
  responses: { 200: jsonContent(ArtifactSchema, "The artifact"), ...errorResponses },
});
artifactCrudRoutes.openapi(update, async (c) => {
  const artifact = await artifactFor(c, c.req.valid("param").id, "artifacts:write");
  const body = c.req.valid("json");
  const change = body.edits ? { edits: body.edits } : { title: body.title, summary: body.summary };
  const updated = await changeArtifact(c.get("db"), artifact, change);
  return c.json(artifactJson(c, updated), 200);
});

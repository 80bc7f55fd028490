import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authorize } from "../../auth/authorize";
import type { Permission } from "../../auth/permissions";
import { config } from "../../lib/config";
import { ApiError, notFound } from "../../lib/errors";
import { errorResponses, IdParam, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import {
  artifactScope,
  changeArtifact,
  createArtifact,
  findArtifact,
  listArtifacts,
  publicArtifact,
} from "../../services/artifacts/artifacts";
import { getKnowledgeBase, knowledgeBaseScope } from "../../services/knowledge-bases";
import type { AppEnv } from "../../types";
import { ArtifactSchema, CreateArtifactBody, ListArtifactsQuery, UpdateArtifactBody } from "./schemas";

const tags = ["Artifacts"];

const list = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}/artifacts",
  tags,
  operationId: "listArtifacts",
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

const create = createRoute({
  method: "post",
  path: "/knowledge-bases/{id}/artifacts",
  tags,
  operationId: "createArtifact",
  summary: "Create a Markdown or HTML artifact (revision 1)",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(CreateArtifactBody) },
  responses: { 201: jsonContent(ArtifactSchema, "The artifact"), ...errorResponses },
});

const get = createRoute({
  method: "get",
  path: "/artifacts/{id}",
  tags,
  operationId: "getArtifact",
  summary: "An active artifact by id or slug (archived ones are 404)",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(ArtifactSchema, "The artifact"), ...errorResponses },
});

const update = createRoute({
  method: "patch",
  path: "/artifacts/{id}",
  tags,
  operationId: "updateArtifact",
  summary: "Change title/summary, or apply 1 to 50 edits all-or-nothing; either way one new revision",
  description:
    "Send either `title`/`summary` or `edits`, not both. Edits apply in order, each to the result of the previous; " +
    "each `oldText` must occur exactly once (or at least once with `replaceAll`), otherwise 400 names the failing " +
    "edit and nothing changes. An archived artifact cannot be changed (409 `artifact_archived`).",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(UpdateArtifactBody) },
  responses: { 200: jsonContent(ArtifactSchema, "The artifact"), ...errorResponses },
});

/** Loads an artifact by id or slug and authorizes it by its knowledge base (404 outside the caller's reach). */
export async function artifactFor(c: Context<AppEnv>, permission: Permission, idOrSlug: string) {
  const artifact = await findArtifact(c.get("db"), idOrSlug);
  await authorize(c, permission, artifactScope(artifact), { what: "Artifact" });
  return artifact!;
}

export const artifactJson = (c: Context<AppEnv>, a: Parameters<typeof publicArtifact>[0]) =>
  publicArtifact(a, config(c.env).publicBaseUrl);

async function knowledgeBaseFor(c: Context<AppEnv>, permission: Permission, id: string, tenantId?: string) {
  const kb = await getKnowledgeBase(c.get("db"), id);
  await authorize(c, permission, knowledgeBaseScope(kb), { what: "Knowledge base" });
  if (tenantId !== undefined && tenantId !== kb!.tenantId) {
    throw new ApiError("tenant_mismatch", "tenant_id does not match the knowledge base's tenant", {
      details: [{ path: "tenant_id", message: "Does not match the knowledge base's tenant" }],
    });
  }
  return kb!;
}

export const artifactRoutes = createRouter()
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const kb = await knowledgeBaseFor(c, "artifacts:read", c.req.valid("param").id, q.tenant_id);
    const { rows, total } = await listArtifacts(c.get("db"), kb.id, {
      type: q.type,
      query: q.query,
      includeStatus: q.include_status,
      limit: q.limit,
      offset: q.offset,
    });
    return c.json({ artifacts: rows.map((a) => artifactJson(c, a)), total, limit: q.limit, offset: q.offset }, 200);
  })
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const kb = await knowledgeBaseFor(c, "artifacts:write", c.req.valid("param").id, body.tenant_id);
    const artifact = await createArtifact(c.get("db"), kb, body);
    return c.json(artifactJson(c, artifact), 201);
  })
  .openapi(get, async (c) => {
    const artifact = await artifactFor(c, "artifacts:read", c.req.valid("param").id);
    if (artifact.status !== "active") throw notFound("Artifact");
    return c.json(artifactJson(c, artifact), 200);
  })
  .openapi(update, async (c) => {
    const artifact = await artifactFor(c, "artifacts:write", c.req.valid("param").id);
    const body = c.req.valid("json");
    const change = body.edits ? { edits: body.edits } : { title: body.title, summary: body.summary };
    const updated = await changeArtifact(c.get("db"), artifact, change);
    return c.json(artifactJson(c, updated), 200);
  });

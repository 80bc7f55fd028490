import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, IdParam, jsonBody, jsonContent, noContent, userOnly, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import {
  activeArtifactFor,
  artifactFor,
  artifactJson,
  listRevisions,
  publishArtifact,
  setArtifactStatus,
  unpublishArtifact,
} from "../../services/artifacts/artifacts";
import { ArtifactSchema, PublishBody, RevisionSchema, RevisionsQuery } from "./schemas";

const tags = ["Artifacts"];

export const artifactLifecycleRoutes = createRouter();

const archive = createRoute({
  method: "post",
  path: "/artifacts/{id}/archive",
  tags,
  operationId: "archiveArtifact",
  ...routePermission("artifacts:write"),
  summary: "Archive (idempotent); revisions are kept and a published page stops being served until restored",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(ArtifactSchema, "The archived artifact"), ...errorResponses },
});
artifactLifecycleRoutes.openapi(archive, async (c) => {
  const artifact = await artifactFor(c, c.req.valid("param").id, "artifacts:write");
  return c.json(artifactJson(c, await setArtifactStatus(c.get("db"), artifact, "archived")), 200);
});

const restore = createRoute({
  method: "post",
  path: "/artifacts/{id}/restore",
  tags,
  operationId: "restoreArtifact",
  ...routePermission("artifacts:write"),
  summary: "Restore an archived artifact (idempotent)",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(ArtifactSchema, "The active artifact"), ...errorResponses },
});
artifactLifecycleRoutes.openapi(restore, async (c) => {
  const artifact = await artifactFor(c, c.req.valid("param").id, "artifacts:write");
  return c.json(artifactJson(c, await setArtifactStatus(c.get("db"), artifact, "active")), 200);
});

const revisions = createRoute({
  method: "get",
  path: "/artifacts/{id}/revisions",
  tags,
  operationId: "listArtifactRevisions",
  ...routePermission("artifacts:read"),
  summary: "Revision history of an active artifact, oldest first (revision 1 is the creation)",
  security: userOrKey,
  request: { params: IdParam, query: RevisionsQuery },
  responses: {
    200: jsonContent(
      z.object({ revisions: z.array(RevisionSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
      "Revisions",
    ),
    ...errorResponses,
  },
});
artifactLifecycleRoutes.openapi(revisions, async (c) => {
  const q = c.req.valid("query");
  const artifact = await activeArtifactFor(c, c.req.valid("param").id, "artifacts:read");
  const { revisions, total } = await listRevisions(c.get("db"), artifact.id, q);
  return c.json({ revisions, total, limit: q.limit, offset: q.offset }, 200);
});

const publish = createRoute({
  method: "post",
  path: "/artifacts/{id}/publish",
  tags,
  operationId: "publishArtifact",
  ...routePermission("artifacts:publish"),
  summary: "Publish as a hosted page at PUBLIC_BASE_URL/p/:slug (signed-in users only; API keys get 403)",
  description:
    "`private`: only signed-in members of the organization can open the page; `public`: anyone. Publishing again " +
    "changes the visibility. An archived artifact cannot be published (409 `artifact_archived`).",
  security: userOnly,
  request: { params: IdParam, body: jsonBody(PublishBody) },
  responses: { 200: jsonContent(ArtifactSchema, "The artifact with `published` set"), ...errorResponses },
});
artifactLifecycleRoutes.openapi(publish, async (c) => {
  const artifact = await artifactFor(c, c.req.valid("param").id, "artifacts:publish");
  const published = await publishArtifact(c.get("db"), artifact, c.req.valid("json").visibility);
  return c.json(artifactJson(c, published), 200);
});

const unpublish = createRoute({
  method: "delete",
  path: "/artifacts/{id}/publish",
  tags,
  operationId: "unpublishArtifact",
  ...routePermission("artifacts:publish"),
  summary: "Remove the hosted page (idempotent); the artifact and its revisions stay",
  security: userOnly,
  request: { params: IdParam },
  responses: { 204: noContent, ...errorResponses },
});
artifactLifecycleRoutes.openapi(unpublish, async (c) => {
  const artifact = await artifactFor(c, c.req.valid("param").id, "artifacts:publish");
  await unpublishArtifact(c.get("db"), artifact);
  return c.body(null, 204);
});

import { jsonBody, jsonContent, noContent, pageBody, pageSchema } from "../../lib/openapi";
import { ctxOf } from "../context";
import { createRouter } from "../../lib/router";
import { activeArtifactFor, artifactFor, artifactJson, listRevisions, publicRevision, publishArtifact, setArtifactStatus, unpublishArtifact } from "../../services/artifacts/artifacts";
import { ArtifactSchema, PublishBody, RevisionSchema, RevisionsQuery } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Artifacts"]);

export const artifactLifecycleRoutes = createRouter();

const archive = route("post", "/artifacts/{id}/archive", "artifacts:write", {
  operationId: "archiveArtifact",
  summary: "Archive (idempotent); revisions are kept and a published page stops being served until restored",
  responses: { 200: jsonContent(ArtifactSchema, "The archived artifact") },
});
artifactLifecycleRoutes.openapi(archive, async (c) => {
  const artifact = await artifactFor(ctxOf(c), c.req.valid("param").id, "artifacts:write");
  return c.json(artifactJson(ctxOf(c), await setArtifactStatus(c.get("db"), artifact, "archived")), 200);
});

const restore = route("post", "/artifacts/{id}/restore", "artifacts:write", {
  operationId: "restoreArtifact", summary: "Restore an archived artifact (idempotent)",
  responses: { 200: jsonContent(ArtifactSchema, "The active artifact") },
});
artifactLifecycleRoutes.openapi(restore, async (c) => {
  const artifact = await artifactFor(ctxOf(c), c.req.valid("param").id, "artifacts:write");
  return c.json(artifactJson(ctxOf(c), await setArtifactStatus(c.get("db"), artifact, "active")), 200);
});

const revisions = route("get", "/artifacts/{id}/revisions", "artifacts:read", {
  operationId: "listArtifactRevisions",
  summary: "Revision history of an active artifact, oldest first (revision 1 is the creation)",
  request: { query: RevisionsQuery },
  responses: { 200: jsonContent(pageSchema("revisions", RevisionSchema), "Revisions") },
});
artifactLifecycleRoutes.openapi(revisions, async (c) => {
  const q = c.req.valid("query");
  const artifact = await activeArtifactFor(ctxOf(c), c.req.valid("param").id, "artifacts:read");
  return c.json(pageBody("revisions", await listRevisions(c.get("db"), artifact.id, q), q, publicRevision), 200);
});

const publish = route("post", "/artifacts/{id}/publish", "artifacts:publish", {
  operationId: "publishArtifact",
  summary: "Publish as a hosted page at PUBLIC_BASE_URL/p/:slug (signed-in users only; API keys get 403)",
  description:
    "`private`: only signed-in members of the organization can open the page; `public`: anyone. Publishing again " +
    "changes the visibility. An archived artifact cannot be published (409 `artifact_archived`).",
  request: { body: jsonBody(PublishBody) },
  responses: { 200: jsonContent(ArtifactSchema, "The artifact with `published` set") },
});
artifactLifecycleRoutes.openapi(publish, async (c) => {
  const artifact = await artifactFor(ctxOf(c), c.req.valid("param").id, "artifacts:publish");
  const published = await publishArtifact(c.get("db"), artifact, c.req.valid("json").visibility);
  return c.json(artifactJson(ctxOf(c), published), 200);
});

const unpublish = route("delete", "/artifacts/{id}/publish", "artifacts:publish", {
  operationId: "unpublishArtifact", summary: "Remove the hosted page (idempotent); the artifact and its revisions stay",
  responses: { 204: noContent },
});
artifactLifecycleRoutes.openapi(unpublish, async (c) => {
  const artifact = await artifactFor(ctxOf(c), c.req.valid("param").id, "artifacts:publish");
  await unpublishArtifact(c.get("db"), artifact);
  return c.body(null, 204);
});

import { ctxOf } from "../context";
import type { ServiceContext } from "../../contracts/context";
import type { Permission } from "../../auth/permissions";
import { jsonBody, jsonContent, noContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { tenantFor } from "../../services/memory/access";
import { deleteMemoryOf, graphOf, knowledgeBaseMemories, listKnowledgeBaseMemories, listTenantMemoriesOf, type MemoryView, tenantMemories } from "../../services/memory/browse";
import { getMemorySettings, publicMemorySettings, updateMemorySettings } from "../../services/memory/settings";
import { GraphQuery, KbMemoryListSchema, MemoryGraphSchema, MemoryListQuery, MemoryListSchema, MemorySettingsSchema, UpdateMemorySettingsBody } from "./schemas";
import { routesTagged } from "../define-route";

const tenantRoute = routesTagged(["Memory"]);

export const memoryRoutes = createRouter();

const getSettings = tenantRoute("get", "/tenants/{id}/memory-settings", "memory:read", {
  operationId: "getTenantMemorySettings",
  summary: "The tenant's resolved memory settings (default mode disabled, retention explicit_only)",
  responses: { 200: jsonContent(MemorySettingsSchema, "Memory settings") },
});
memoryRoutes.openapi(getSettings, async (c) => {
  const { tenant } = await tenantFor(ctxOf(c), c.req.valid("param").id, "memory:read");
  return c.json(publicMemorySettings(tenant.id, await getMemorySettings(c.get("db"), tenant.id)), 200);
});

const patchSettings = tenantRoute("patch", "/tenants/{id}/memory-settings", "memory:admin", {
  operationId: "updateTenantMemorySettings",
  summary: "Change durable memory mode and/or retention (owner or billing_admin)",
  request: { body: jsonBody(UpdateMemorySettingsBody) },
  responses: { 200: jsonContent(MemorySettingsSchema, "Updated settings") },
});
memoryRoutes.openapi(patchSettings, async (c) => {
  const { tenant } = await tenantFor(ctxOf(c), c.req.valid("param").id, "memory:admin");
  const settings = await updateMemorySettings(c.get("db"), tenant, c.req.valid("json"));
  return c.json(publicMemorySettings(tenant.id, settings), 200);
});

const listTenantMemories = tenantRoute("get", "/tenants/{id}/memories", "memory:read", {
  operationId: "listTenantMemories",
  summary: "Durable memories of the tenant's end users; a disabled result when durable memory is off",
  description:
    "Owners and billing admins see every subject's memories (filter with subject_id / external_subject_id); other " +
    "members see only their own. Memories kept under a knowledge base (kb_restricted) are listed there.",
  request: { query: MemoryListQuery }, responses: { 200: jsonContent(MemoryListSchema, "Memories") },
});
memoryRoutes.openapi(listTenantMemories, async (c) => {
  const view = await tenantMemories(ctxOf(c), c.req.valid("param").id, "memory:read");
  return c.json(await listTenantMemoriesOf(ctxOf(c), view, c.req.valid("query")), 200);
});

const kbRoute = routesTagged(["Knowledge bases"]);

const listKbMemories = kbRoute("get", "/knowledge-bases/{id}/memories", "documents:read", {
  operationId: "listKnowledgeBaseMemories",
  summary: "Memories kept under this knowledge base; `memories: null` unless kbMemoryMode is kb_restricted",
  request: { query: MemoryListQuery }, responses: { 200: jsonContent(KbMemoryListSchema, "Memories") },
});
memoryRoutes.openapi(listKbMemories, async (c) => {
  const view = await knowledgeBaseMemories(ctxOf(c), c.req.valid("param").id, "documents:read");
  return c.json(await listKnowledgeBaseMemories(ctxOf(c), view, c.req.valid("query")), 200);
});

/**
 * The graph and the deletion of one memory read the same wherever memories are kept (a tenant's
 * durable memories, a knowledge base's kb_restricted ones); only how the place is loaded differs.
 */
function graphAndDeletion(place: {
  route: ReturnType<typeof routesTagged>;
  base: "/tenants/{id}" | "/knowledge-bases/{id}";
  name: "Tenant" | "KnowledgeBase";
  read: Permission;
  remove: Permission;
  load: (ctx: ServiceContext, id: string, permission: Permission) => Promise<MemoryView>;
  summaries: { graph: string; remove: string };
}) {
  const graph = place.route("get", `${place.base}/memories/graph`, place.read, {
    operationId: `get${place.name}MemoryGraph`, summary: place.summaries.graph,
    request: { query: GraphQuery }, responses: { 200: jsonContent(MemoryGraphSchema, "The graph") },
  });
  memoryRoutes.openapi(graph, async (c) => {
    const view = await place.load(ctxOf(c), c.req.valid("param").id, place.read);
    return c.json(await graphOf(ctxOf(c), view, c.req.valid("query")), 200);
  });

  const remove = place.route("delete", `${place.base}/memories/{memoryId}`, place.remove, {
    operationId: `delete${place.name}Memory`, summary: place.summaries.remove, responses: { 204: noContent },
  });
  memoryRoutes.openapi(remove, async (c) => {
    const p = c.req.valid("param");
    await deleteMemoryOf(ctxOf(c), await place.load(ctxOf(c), p.id, place.remove), p.memoryId);
    return c.body(null, 204);
  });
}

graphAndDeletion({
  route: tenantRoute, base: "/tenants/{id}", name: "Tenant", read: "memory:read", remove: "memory:admin", load: tenantMemories,
  summaries: {
    graph: "Durable memories as entities and relationships; empty when durable memory is off",
    remove: "Delete one durable memory with its graph edges (and nodes left without memories)",
  },
});
graphAndDeletion({
  route: kbRoute, base: "/knowledge-bases/{id}", name: "KnowledgeBase", read: "documents:read", remove: "documents:delete",
  load: knowledgeBaseMemories,
  summaries: {
    graph: "This knowledge base's memories as entities and relationships (empty unless kb_restricted)",
    remove: "Delete one memory kept under this knowledge base",
  },
});

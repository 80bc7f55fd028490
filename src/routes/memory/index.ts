import { createRoute } from "@hono/zod-openapi";
import { loadAuthorized } from "../../auth/load";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, IdParam, jsonBody, jsonContent, noContent, userOnly, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { getKnowledgeBase, knowledgeBaseScope } from "../../services/knowledge-bases";
import { memoryWithin, subjectFilter, tenantFor } from "../../services/memory/access";
import { deleteMemory, EMPTY_GRAPH, listMemories, memoryGraph, publicMemory } from "../../services/memory/memories";
import { getMemorySettings, publicMemorySettings, updateMemorySettings } from "../../services/memory/settings";
import type { AppEnv } from "../../types";
import type { Context } from "hono";
import {
  GraphQuery,
  KbMemoryListSchema,
  MemoryGraphSchema,
  MemoryIdParams,
  MemoryListQuery,
  MemoryListSchema,
  MemorySettingsSchema,
  UpdateMemorySettingsBody,
} from "./schemas";

const tenantTags = ["Memory"];

const getSettings = createRoute({
  method: "get",
  path: "/tenants/{id}/memory-settings",
  tags: tenantTags,
  operationId: "getTenantMemorySettings",
  ...routePermission("memory:read"),
  summary: "The tenant's resolved memory settings (default mode disabled, retention explicit_only)",
  security: userOnly,
  request: { params: IdParam },
  responses: { 200: jsonContent(MemorySettingsSchema, "Memory settings"), ...errorResponses },
});

const patchSettings = createRoute({
  method: "patch",
  path: "/tenants/{id}/memory-settings",
  tags: tenantTags,
  operationId: "updateTenantMemorySettings",
  ...routePermission("memory:admin"),
  summary: "Change durable memory mode and/or retention (owner or billing_admin)",
  security: userOnly,
  request: { params: IdParam, body: jsonBody(UpdateMemorySettingsBody) },
  responses: { 200: jsonContent(MemorySettingsSchema, "Updated settings"), ...errorResponses },
});

const listTenantMemories = createRoute({
  method: "get",
  path: "/tenants/{id}/memories",
  tags: tenantTags,
  operationId: "listTenantMemories",
  ...routePermission("memory:read"),
  summary: "Durable memories of the tenant's end users; a disabled result when durable memory is off",
  description:
    "Owners and billing admins see every subject's memories (filter with subject_id / external_subject_id); other " +
    "members see only their own. Memories kept under a knowledge base (kb_restricted) are listed there.",
  security: userOnly,
  request: { params: IdParam, query: MemoryListQuery },
  responses: { 200: jsonContent(MemoryListSchema, "Memories"), ...errorResponses },
});

const tenantGraph = createRoute({
  method: "get",
  path: "/tenants/{id}/memories/graph",
  tags: tenantTags,
  operationId: "getTenantMemoryGraph",
  ...routePermission("memory:read"),
  summary: "Durable memories as entities and relationships; empty when durable memory is off",
  security: userOnly,
  request: { params: IdParam, query: GraphQuery },
  responses: { 200: jsonContent(MemoryGraphSchema, "The graph"), ...errorResponses },
});

const deleteTenantMemory = createRoute({
  method: "delete",
  path: "/tenants/{id}/memories/{memoryId}",
  tags: tenantTags,
  operationId: "deleteTenantMemory",
  ...routePermission("memory:admin"),
  summary: "Delete one durable memory with its graph edges (and nodes left without memories)",
  security: userOnly,
  request: { params: MemoryIdParams },
  responses: { 204: noContent, ...errorResponses },
});

const kbTags = ["Knowledge bases"];

const listKbMemories = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}/memories",
  tags: kbTags,
  operationId: "listKnowledgeBaseMemories",
  ...routePermission("documents:read"),
  summary: "Memories kept under this knowledge base; `memories: null` unless kbMemoryMode is kb_restricted",
  security: userOrKey,
  request: { params: IdParam, query: MemoryListQuery },
  responses: { 200: jsonContent(KbMemoryListSchema, "Memories"), ...errorResponses },
});

const kbGraph = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}/memories/graph",
  tags: kbTags,
  operationId: "getKnowledgeBaseMemoryGraph",
  ...routePermission("documents:read"),
  summary: "This knowledge base's memories as entities and relationships (empty unless kb_restricted)",
  security: userOrKey,
  request: { params: IdParam, query: GraphQuery },
  responses: { 200: jsonContent(MemoryGraphSchema, "The graph"), ...errorResponses },
});

const deleteKbMemory = createRoute({
  method: "delete",
  path: "/knowledge-bases/{id}/memories/{memoryId}",
  tags: kbTags,
  operationId: "deleteKnowledgeBaseMemory",
  ...routePermission("documents:delete"),
  summary: "Delete one memory kept under this knowledge base",
  security: userOrKey,
  request: { params: MemoryIdParams },
  responses: { 204: noContent, ...errorResponses },
});

async function kbWithAccess(c: Context<AppEnv>, id: string, permission: "documents:read" | "documents:delete") {
  const kb = await getKnowledgeBase(c.get("db"), id);
  const { row, access } = await loadAuthorized(c, permission, kb, (k) => knowledgeBaseScope(k)!, { what: "Knowledge base" });
  return { kb: row, access };
}

export const memoryRoutes = createRouter()
  .openapi(getSettings, async (c) => {
    const { tenant } = await tenantFor(c, c.req.valid("param").id, "memory:read");
    return c.json(publicMemorySettings(tenant.id, await getMemorySettings(c.get("db"), tenant.id)), 200);
  })
  .openapi(patchSettings, async (c) => {
    const { tenant } = await tenantFor(c, c.req.valid("param").id, "memory:admin");
    const settings = await updateMemorySettings(c.get("db"), tenant, c.req.valid("json"));
    return c.json(publicMemorySettings(tenant.id, settings), 200);
  })
  .openapi(listTenantMemories, async (c) => {
    const q = c.req.valid("query");
    const { tenant, access } = await tenantFor(c, c.req.valid("param").id, "memory:read");
    const db = c.get("db");
    if ((await getMemorySettings(db, tenant.id)).mode !== "durable") return c.json({ memories: [], total: 0, disabled: true }, 200);
    const { rows, total } = await listMemories(
      db,
      { tenantId: tenant.id, knowledgeBaseId: null, subjectId: subjectFilter(access, q), q: q.q },
      { limit: q.limit, offset: q.offset },
    );
    return c.json({ memories: rows.map(publicMemory), total, limit: q.limit, offset: q.offset, disabled: false }, 200);
  })
  .openapi(tenantGraph, async (c) => {
    const q = c.req.valid("query");
    const { tenant, access } = await tenantFor(c, c.req.valid("param").id, "memory:read");
    const db = c.get("db");
    if ((await getMemorySettings(db, tenant.id)).mode !== "durable") return c.json(EMPTY_GRAPH, 200);
    return c.json(await memoryGraph(db, { tenantId: tenant.id, knowledgeBaseId: null, subjectId: subjectFilter(access, q) }), 200);
  })
  .openapi(deleteTenantMemory, async (c) => {
    const p = c.req.valid("param");
    const { tenant, access } = await tenantFor(c, p.id, "memory:admin");
    const m = await memoryWithin(c, access, { tenantId: tenant.id, knowledgeBaseId: null }, p.memoryId);
    await deleteMemory(c.get("db"), m.id);
    return c.body(null, 204);
  })
  .openapi(listKbMemories, async (c) => {
    const q = c.req.valid("query");
    const { kb, access } = await kbWithAccess(c, c.req.valid("param").id, "documents:read");
    if (kb.kbMemoryMode !== "kb_restricted") return c.json({ memories: null }, 200);
    const { rows, total } = await listMemories(
      c.get("db"),
      { tenantId: kb.tenantId, knowledgeBaseId: kb.id, subjectId: subjectFilter(access, q), q: q.q },
      { limit: q.limit, offset: q.offset },
    );
    return c.json({ memories: rows.map(publicMemory), total, limit: q.limit, offset: q.offset, disabled: false }, 200);
  })
  .openapi(kbGraph, async (c) => {
    const q = c.req.valid("query");
    const { kb, access } = await kbWithAccess(c, c.req.valid("param").id, "documents:read");
    if (kb.kbMemoryMode !== "kb_restricted") return c.json(EMPTY_GRAPH, 200);
    return c.json(await memoryGraph(c.get("db"), { tenantId: kb.tenantId, knowledgeBaseId: kb.id, subjectId: subjectFilter(access, q) }), 200);
  })
  .openapi(deleteKbMemory, async (c) => {
    const p = c.req.valid("param");
    const { kb, access } = await kbWithAccess(c, p.id, "documents:delete");
    const m = await memoryWithin(c, access, { tenantId: kb.tenantId, knowledgeBaseId: kb.id }, p.memoryId);
    await deleteMemory(c.get("db"), m.id);
    return c.body(null, 204);
  });

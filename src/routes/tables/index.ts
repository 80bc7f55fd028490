import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, IdParam, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { listKbTables, publicTable, runSql } from "../../services/tables/service";
import { SqlBody, SqlResultSchema, TableSchema } from "./schemas";

const tags = ["Connected data"];

const list = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}/tables",
  tags,
  operationId: "listKnowledgeBaseTables",
  ...routePermission("documents:read"),
  summary: "Tables loaded from the knowledge base's CSV, XLSX and JSON documents",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(z.object({ tables: z.array(TableSchema) }), "The tables"), ...errorResponses },
});

const query = createRoute({
  method: "post",
  path: "/knowledge-bases/{id}/sql",
  tags,
  operationId: "queryKnowledgeBaseTables",
  ...routePermission("documents:read"),
  summary: "Run one read-only SQL query over the knowledge base's tables",
  description:
    "One SELECT or WITH statement (SQLite dialect), at most 10,000 characters. More than 1,000 rows: the first 1,000 " +
    "with `truncated: true`. Past 5 s: 400 `query_timeout`. Writes, DDL, ATTACH, PRAGMA, several statements, " +
    "virtual tables and file or extension functions: 400 `invalid_sql` with the database's reason.",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(SqlBody) },
  responses: { 200: jsonContent(SqlResultSchema, "The rows"), ...errorResponses },
});

export const tableRoutes = createRouter()
  .openapi(list, async (c) => {
    const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "documents:read");
    const tables = await listKbTables(c.env, c.get("db"), kb.id);
    return c.json({ tables: tables.map(publicTable) }, 200);
  })
  .openapi(query, async (c) => {
    const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "documents:read");
    const result = await runSql(c.env, c.get("db"), kb.id, c.req.valid("json").query);
    return c.json(result, 200);
  });

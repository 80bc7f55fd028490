import { ctxOf } from "../context";
import { jsonBody, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { runSql } from "../../services/tables/service";
import { SqlBody, SqlResultSchema } from "./table-schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Connected data"]);

/** POST /knowledge-bases/{id}/sql: one read-only query over the knowledge base's tables. */
export const sqlRoutes = createRouter();

const query = route("post", "/knowledge-bases/{id}/sql", "documents:read", {
  operationId: "queryKnowledgeBaseTables", summary: "Run one read-only SQL query over the knowledge base's tables",
  description:
    "One SELECT or WITH statement (SQLite dialect), at most 10,000 characters. More than 1,000 rows: the first 1,000 " +
    "with `truncated: true`. Past 5 s: 400 `query_timeout`. Writes, DDL, ATTACH, PRAGMA, several statements, " +
    "virtual tables and file or extension functions: 400 `invalid_sql` with the database's reason.",
  request: { body: jsonBody(SqlBody) }, responses: { 200: jsonContent(SqlResultSchema, "The rows") },
});
sqlRoutes.openapi(query, async (c) => {
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "documents:read");
  const result = await runSql(c.env, c.get("db"), kb.id, c.req.valid("json").query);
  return c.json(result, 200);
});


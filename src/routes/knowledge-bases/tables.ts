import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { listKbTables, publicTable } from "../../services/tables/service";
import { TableSchema } from "./table-schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Connected data"]);

/** GET /knowledge-bases/{id}/tables (POST /knowledge-bases/{id}/sql: ./sql.ts). */
export const tableRoutes = createRouter();

const list = route("get", "/knowledge-bases/{id}/tables", "documents:read", {
  operationId: "listKnowledgeBaseTables",
  summary: "Tables loaded from the knowledge base's CSV, XLSX and JSON documents",
  responses: { 200: jsonContent(z.object({ tables: z.array(TableSchema) }), "The tables") },
});
tableRoutes.openapi(list, async (c) => {
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "documents:read");
  const tables = await listKbTables(c.env, c.get("db"), kb.id);
  return c.json({ tables: tables.map(publicTable) }, 200);
});

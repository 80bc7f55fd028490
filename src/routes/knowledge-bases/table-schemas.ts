import { z } from "@hono/zod-openapi";

export const TableColumnSchema = z
  .object({
    name: z.string().openapi({ description: "Cleaned column name (lower snake case) to use in SQL" }),
    type: z.enum(["integer", "real", "text"]),
    format: z.enum(["date", "datetime"]).optional().openapi({ description: "Set on text columns holding ISO 8601 dates or date-times" }),
    source_name: z.string().openapi({ description: "The column's header in the file" }),
  })
  .openapi("TableColumn");

export const TableSchema = z
  .object({
    name: z.string().openapi({ description: "Named after the file (and sheet) in lower snake case, unique in the knowledge base" }),
    document_id: z.string(),
    filename: z.string(),
    sheet: z.string().nullable().openapi({ description: "The XLSX sheet (or JSON key) the table came from" }),
    columns: z.array(TableColumnSchema),
    row_count: z.number().int(),
    truncated: z.boolean().openapi({ description: "The file had more rows than a table holds (README \"Connected data\" limits)" }),
  })
  .openapi("Table");

export const SqlBody = z
  .object({
    query: z.string().min(1).openapi({
      description: "One read-only SELECT or WITH statement, at most 10,000 characters",
      example: "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC",
    }),
  })
  .openapi("SqlQuery");

const CellSchema = z.union([z.string(), z.number(), z.null()]);

export const SqlResultSchema = z
  .object({
    columns: z.array(z.string()),
    rows: z.array(z.array(CellSchema)),
    row_count: z.number().int().openapi({ description: "Rows returned (at most 1,000)" }),
    truncated: z.boolean().openapi({ description: "The query had more rows than were returned" }),
  })
  .openapi("SqlResult");

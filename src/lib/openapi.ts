import { z } from "@hono/zod-openapi";
import { ERROR_CODES } from "./errors";

/** The error body of every non-2xx answer (API-DECISIONS.md, "Errors"). */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES).openapi({ example: "invalid_request", description: "One of a closed set; see src/lib/errors.ts" }),
      message: z.string().openapi({ example: "body.name: Required" }),
      details: z
        .array(z.object({ path: z.string(), message: z.string() }))
        .optional()
        .openapi({ description: "For validation errors: one entry per bad field." }),
      request_id: z.string(),
    }),
  })
  .openapi("Error");

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorSchema } },
});

/** Error responses every authenticated route may give; spread into `responses`. */
export const errorResponses = {
  400: errorResponse("Invalid request"),
  401: errorResponse("Missing or invalid credentials"),
  403: errorResponse("Not allowed for this caller"),
  404: errorResponse("Not found, or outside the caller's reach"),
  409: errorResponse("Conflict with the current state"),
  429: errorResponse("Too many requests"),
  500: errorResponse("Internal error"),
} as const;

const EXTRA_ERRORS = {
  402: "The tenant has no available credits",
  413: "The body or file is larger than its limit",
  415: "The file type is not accepted",
  422: "A remote resource could not be fetched or understood",
  502: "An upstream service failed",
} as const;

/** The less common error responses a route may give, by status: `...extraErrors(402, 422)`. */
export function extraErrors<S extends keyof typeof EXTRA_ERRORS>(...statuses: S[]) {
  return Object.fromEntries(statuses.map((s) => [s, errorResponse(EXTRA_ERRORS[s])])) as Record<S, ReturnType<typeof errorResponse>>;
}

/** Security requirement objects for `createRoute({ security })`. */
export const userOrKey: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { sessionCookie: [] }];
export const userOnly: Array<Record<string, string[]>> = [{ sessionCookie: [] }];

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true as const,
  description,
  content: { "application/json": { schema } },
});

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const noContent = { description: "No content" } as const;

// ---- Shared field schemas --------------------------------------------------

export const Timestamp = z.string().openapi({ format: "date-time", example: "2026-11-21T12:00:00.000Z" });

/** Paging query parameters used by list endpoints. */
export const pagingQuery = (maxLimit: number, defaultLimit: number) =>
  z.object({
    limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit),
    offset: z.coerce.number().int().min(0).default(0),
  });

const pageFields = { total: z.number().int(), limit: z.number().int(), offset: z.number().int() };

/** The body of a paged list: `{ <key>: [items], total, limit, offset }`. */
export const pageSchema = <K extends string, T extends z.ZodType>(key: K, item: T) =>
  z.object({ [key]: z.array(item), ...pageFields } as { [P in K]: z.ZodArray<T> } & typeof pageFields);

export { pageBody } from "./page-body";


/** A boolean in a query string: `true`/`false`/`1`/`0`. */
export const queryBoolean = z
  .enum(["true", "false", "1", "0"])
  .transform((v) => v === "true" || v === "1");

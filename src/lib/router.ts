import { OpenAPIHono } from "@hono/zod-openapi";
import type { ZodError } from "zod";
import type { AppEnv } from "../types";
import { isPublicPath } from "../auth/middleware";
import { ApiError, unauthorized, type ErrorDetail } from "./errors";

const TARGET_NAMES: Record<string, string> = {
  json: "body",
  form: "body",
  query: "query",
  param: "path",
  header: "header",
  cookie: "cookie",
};

export function zodDetails(error: ZodError, target: string): ErrorDetail[] {
  const prefix = TARGET_NAMES[target] ?? target;
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].join("."),
    message: issue.message,
  }));
}

/**
 * Every router is built here so that validation failures anywhere render the
 * same 400 `invalid_request` body, naming each bad field.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        // Credentials are checked before input: anonymous callers of a
        // non-public route learn only that it needs credentials.
        if (!c.get("caller") && !isPublicPath(c)) throw unauthorized();
        const details = zodDetails(result.error as ZodError, result.target);
        const summary = details
          .slice(0, 3)
          .map((d) => `${d.path}: ${d.message}`)
          .join("; ");
        throw new ApiError("invalid_request", summary || "Invalid request", { details });
      }
    },
  });
}

export type Router = ReturnType<typeof createRouter>;

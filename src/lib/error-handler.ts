import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../types";
import { isPublicPath } from "../auth/middleware";
import { isMcpEndpointPath, mcpChallenge } from "../auth/oauth";
import { ApiError, unauthorized, type ErrorDetail } from "./errors";

function render(
  c: Context<AppEnv>,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  details?: ErrorDetail[],
  headers?: Record<string, string>,
) {
  const request_id = c.get("requestId") ?? "";
  // RFC 9110: a 401 names the scheme it wants (API keys as bearer tokens; A2A clients read it). On the
  // MCP endpoint it also points at the OAuth metadata (RFC 9728), where MCP clients start OAuth.
  if (status === 401 && !headers?.["WWW-Authenticate"]) {
    const challenge = isMcpEndpointPath(new URL(c.req.url).pathname) ? mcpChallenge(c.env) : 'Bearer realm="api"';
    headers = { ...headers, "WWW-Authenticate": challenge };
  }
  return c.json(
    { error: { code, message, ...(details?.length ? { details } : {}), request_id } },
    status,
    { ...headers, "X-Request-Id": request_id },
  );
}

/**
 * Renders every error in the decided shape. Our own ApiErrors carry their code;
 * Hono's HTTPExceptions (malformed JSON, wrong Content-Type) become 400
 * `invalid_request`; anything else is a bug: logged with the request id, and
 * answered 500 without internals.
 */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ApiError) {
    return render(c, err.status as ContentfulStatusCode, err.code, err.message, err.details, err.headers);
  }
  if (err instanceof HTTPException) {
    if (err.status < 500 && !c.get("caller") && !isPublicPath(c) && new URL(c.req.url).pathname.startsWith("/api/")) {
      const e = unauthorized();
      return render(c, 401, e.code, e.message);
    }
    if (err.status === 415 || (err.status === 400 && /json|content-type/i.test(err.message))) {
      const message =
        err.status === 415
          ? "The request body must be JSON, sent with Content-Type: application/json"
          : "The request body is not valid JSON";
      return render(c, 400, "invalid_request", message, [{ path: "body", message }]);
    }
    if (err.status >= 400 && err.status < 500) {
      return render(c, err.status as ContentfulStatusCode, err.status === 404 ? "not_found" : "invalid_request", err.message || "Bad request");
    }
  }
  console.error(`[${c.get("requestId")}] unhandled error on ${c.req.method} ${new URL(c.req.url).pathname}:`, err);
  return render(c, 500, "internal_error", "Internal server error; quote the request id when reporting it");
};

export const onNotFound: NotFoundHandler<AppEnv> = (c) =>
  render(c, 404, "not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}`);

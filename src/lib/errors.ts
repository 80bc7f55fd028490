import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * Error codes and their HTTP statuses (API-DECISIONS.md, "Errors").
 * Specific codes (for example `tenant_mismatch`, `chat_terminated`) keep the
 * status of the family they belong to.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  tenant_mismatch: 400,
  insufficient_organization_credits: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  forbidden: 403,
  quota_exceeded: 403,
  not_found: 404,
  conflict: 409,
  slug_taken: 409,
  already_member: 409,
  invitation_pending: 409,
  invitation_expired: 409,
  invitation_revoked: 409,
  invitation_accepted: 409,
  last_owner: 409,
  environment_not_empty: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type KnownErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  /** Dotted path of the offending field, for example `body.name` or `query.limit`. */
  path: string;
  message: string;
}

/**
 * The one error type the service throws on purpose. `app.onError` renders it as
 * `{"error": {code, message, details?, request_id}}`. Codes not in ERROR_STATUS
 * may be used with an explicit status (later capabilities add their own).
 */
export class ApiError extends HTTPException {
  readonly code: string;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(
    code: KnownErrorCode | (string & {}),
    message: string,
    opts: { status?: ContentfulStatusCode; details?: ErrorDetail[]; headers?: Record<string, string> } = {},
  ) {
    const status = opts.status ?? (ERROR_STATUS as Record<string, ContentfulStatusCode>)[code] ?? 400;
    super(status, { message });
    this.code = code;
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) =>
  new ApiError("invalid_request", message, { details });
export const unauthorized = (
  message = "Authentication required: send an API key (Authorization: Bearer ...) or sign in",
) => new ApiError("unauthorized", message);
export const forbidden = (message = "You do not have permission to do this") => new ApiError("forbidden", message);
export const notFound = (what = "Resource") => new ApiError("not_found", `${what} not found`);
export const conflict = (code: string, message: string) => new ApiError(code, message, { status: 409 });

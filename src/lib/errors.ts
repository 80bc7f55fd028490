/** The statuses an error answers with (all of them carry a JSON body). */
type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 405 | 408 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 501 | 502 | 503 | 504;

/**
 * THE closed set of error codes, each with its HTTP status (API-DECISIONS.md,
 * "Errors"). Specific codes (`tenant_mismatch`, `chat_terminated`, ...) keep the
 * status of the family they belong to. A new code is added here, once; the
 * OpenAPI error schema publishes this list as an enum.
 */
export const ERROR_STATUS = {
  // 400: the request itself is wrong
  invalid_request: 400,
  tenant_mismatch: 400,
  insufficient_organization_credits: 400,
  size_mismatch: 400,
  content_type_mismatch: 400,
  url_not_allowed: 400,
  connector_not_connected: 400,
  invalid_sql: 400,
  query_timeout: 400,
  // 401 / 402 / 403
  unauthorized: 401,
  insufficient_credits: 402,
  forbidden: 403,
  quota_exceeded: 403,
  // 404
  not_found: 404,
  // 409: the current state does not allow it
  conflict: 409,
  slug_taken: 409,
  email_taken: 409,
  already_member: 409,
  invitation_pending: 409,
  invitation_expired: 409,
  invitation_revoked: 409,
  invitation_accepted: 409,
  last_owner: 409,
  environment_not_empty: 409,
  document_deleted: 409,
  derived_document: 409,
  document_busy: 409,
  document_not_uploaded: 409,
  already_uploaded: 409,
  skill_archived: 409,
  artifact_archived: 409,
  knowledge_base_inactive: 409,
  chat_terminated: 409,
  agent_archived: 409,
  embedding_mismatch: 409,
  // 413 / 415 / 422 / 429
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  fetch_failed: 422,
  invalid_agent_card: 422,
  rate_limited: 429,
  // 5xx
  internal_error: 500,
  upstream_error: 502,
  service_unavailable: 503,
} as const satisfies Record<string, ErrorStatus>;

export type ErrorCode = keyof typeof ERROR_STATUS;
/** @deprecated use ErrorCode */
export type KnownErrorCode = ErrorCode;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

export interface ErrorDetail {
  /** Dotted path of the offending field, for example `body.name` or `query.limit`. */
  path: string;
  message: string;
}

/**
 * The one error type the service throws on purpose. `app.onError` renders it as
 * `{"error": {code, message, details?, request_id}}` with the code's status.
 */
export class ApiError extends Error {
  readonly status: ErrorStatus;
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
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
/** A 409 with a specific code from the 409 family. */
export const conflict = (code: ErrorCode, message: string) => new ApiError(code, message);

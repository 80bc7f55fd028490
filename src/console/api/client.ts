import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

/**
 * The console's only way to the service: the public API (/api/v1), typed from /openapi.json
 * (schema.d.ts, `npm run console:api`), signed in with the session cookie (same origin).
 */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: "same-origin" });

export type Schemas = components["schemas"];

/** A refusal from the API, with its own words (`error.message`) and code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
    /** What was wrong with each field, as the API says it (`error.details`). */
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

function refusal(response: Response, error: unknown): ApiError {
  const body = (error ?? {}) as { error?: { code?: string; message?: string; request_id?: string; details?: { path: string; message: string }[] } };
  const e = body.error;
  const fallback =
    response.status === 0 || response.status >= 500
      ? "The service could not answer. Try again in a moment."
      : `The request was refused (HTTP ${response.status}).`;
  const details = Array.isArray(e?.details) ? e.details.filter((d) => d && typeof d.message === "string") : [];
  return new ApiError(response.status, e?.code ?? "http_error", e?.message ?? fallback, e?.request_id, details);
}

/** The body of a successful call, or an ApiError carrying the API's message. */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  let r: Result<T>;
  try {
    r = await call;
  } catch {
    throw new ApiError(0, "network_error", "The service cannot be reached. Check that it is running and try again.");
  }
  if (!r.response.ok || r.error !== undefined) throw refusal(r.response, r.error);
  return r.data as T;
}

/** The words to show for any error. */
export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

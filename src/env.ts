/**
 * The Worker's bindings and configuration. Every variable is a string (Workers
 * vars and secrets); `src/lib/config.ts` parses them with defaults.
 */
export interface Env {
  DB: D1Database;
  ASSETS: Fetcher;

  /** `development` (default), `test` or `production`. */
  ENVIRONMENT?: string;
  /** Origin used in links the service hands out (share URLs, published pages). */
  PUBLIC_BASE_URL?: string;
  /** Comma-separated origins allowed to make cookie-authenticated browser calls. */
  ALLOWED_ORIGINS?: string;
  STARTING_CREDITS?: string;
  STARTING_TENANT_CREDITS?: string;
  LOGIN_THROTTLE_MAX?: string;
  LOGIN_THROTTLE_WINDOW_SECONDS?: string;
  SIGNUP_THROTTLE_MAX?: string;
  SIGNUP_THROTTLE_WINDOW_SECONDS?: string;
  /** PBKDF2 iterations for new password hashes (Workers caps PBKDF2 at 100,000). */
  PASSWORD_ITERATIONS?: string;
  /** OpenAI-compatible chat-completions endpoint (default https://api.openai.com/v1). */
  OPENAI_BASE_URL?: string;
  /** Secret. With no key, only the offline `local-extractive` model is available. */
  OPENAI_API_KEY?: string;
  /** JSON array of provider models with prices; see README "Models". */
  MODELS?: string;
  /** Optional: outgoing email is POSTed here as JSON; unset = logged. */
  EMAIL_WEBHOOK_URL?: string;
}

type AppBindings = Env;
declare global {
  // `cloudflare:test` types its `env` as Cloudflare.Env.
  namespace Cloudflare {
    interface Env extends AppBindings {}
  }
}

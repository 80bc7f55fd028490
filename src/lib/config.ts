import type { Env } from "../env";
import { MAX_PBKDF2_ITERATIONS } from "./crypto";
import { ApiError } from "./errors";

/** Parsed configuration with the defaults documented in README.md. */
function int(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  return Number.isFinite(n) ? n : fallback;
}

export function isProduction(env: Env): boolean {
  return (env.ENVIRONMENT ?? "development") === "production";
}

export function config(env: Env) {
  return {
    environment: env.ENVIRONMENT ?? "development",
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? "http://localhost:8787").replace(/\/+$/, ""),
    allowedOrigins: (env.ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((s) => s.trim().replace(/\/+$/, ""))
      .filter(Boolean),
    startingCredits: int(env.STARTING_CREDITS, 1000),
    startingTenantCredits: int(env.STARTING_TENANT_CREDITS, 500),
    loginThrottleMax: int(env.LOGIN_THROTTLE_MAX, 10),
    loginThrottleWindowSeconds: int(env.LOGIN_THROTTLE_WINDOW_SECONDS, 900),
    signupThrottleMax: int(env.SIGNUP_THROTTLE_MAX, 30),
    signupThrottleWindowSeconds: int(env.SIGNUP_THROTTLE_WINDOW_SECONDS, 3600),
    passwordIterations: int(env.PASSWORD_ITERATIONS, MAX_PBKDF2_ITERATIONS),
    localModelTokenDelayMs: Math.max(0, int(env.LOCAL_MODEL_TOKEN_DELAY_MS, 0)),
    sseHeartbeatMs: Math.max(1000, int(env.SSE_HEARTBEAT_MS, 15_000)),
  };
}

/** Default largest upload: 50 MiB (API-DECISIONS.md). */
export const DEFAULT_MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/** Documents and ingestion configuration (README "Documents"). */
export function ingestConfig(env: Env) {
  const r2 =
    env.R2_ACCOUNT_ID && env.R2_ACCESS_KEY_ID && env.R2_SECRET_ACCESS_KEY && env.R2_BUCKET_NAME
      ? {
          accountId: env.R2_ACCOUNT_ID,
          accessKeyId: env.R2_ACCESS_KEY_ID,
          secretAccessKey: env.R2_SECRET_ACCESS_KEY,
          bucketName: env.R2_BUCKET_NAME,
        }
      : null;
  return {
    maxUploadBytes: int(env.MAX_UPLOAD_BYTES, DEFAULT_MAX_UPLOAD_BYTES),
    r2,
    vectorIndex: (env.VECTOR_INDEX ?? "local").trim().toLowerCase() === "vectorize" ? ("vectorize" as const) : ("local" as const),
    retryBaseSeconds: Math.max(0, int(env.INGEST_RETRY_BASE_SECONDS, 10)),
  };
}

/** Default weight of the hash embedder's leg in the fusion (README "Retrieval quality"). */
export const HASH_VECTOR_WEIGHT = 0.01;

/** Retrieval configuration (README "Retrieval quality"). */
export function retrievalConfig(env: Env) {
  const vectorWeight = env.RETRIEVAL_VECTOR_WEIGHT?.trim() ? Math.max(0, int(env.RETRIEVAL_VECTOR_WEIGHT, 1)) : null;
  const provider = (env.RERANK_PROVIDER ?? "off").trim().toLowerCase();
  return {
    /** Reciprocal rank fusion constant: score = weight / (k + rank). */
    rrfK: Math.max(1, int(env.RETRIEVAL_RRF_K, 60)),
    lexicalWeight: 1,
    /** The vector leg's weight: RETRIEVAL_VECTOR_WEIGHT, else HASH_VECTOR_WEIGHT for the hash embedder and 1 for learned models. */
    vectorWeight: (embeddingProvider: string) => vectorWeight ?? (embeddingProvider === "hash" ? HASH_VECTOR_WEIGHT : 1),
    rerank: {
      provider: provider === "http" || provider === "workers-ai" ? provider : ("off" as const),
      url: env.RERANK_URL?.trim() || undefined,
      apiKey: env.RERANK_API_KEY?.trim() || undefined,
      model: env.RERANK_MODEL?.trim() || undefined,
      timeoutMs: Math.max(100, int(env.RERANK_TIMEOUT_MS, 5000)),
    },
    /** Fused passages handed to the reranker (at least the number asked for). */
    rerankDepth: Math.max(1, Math.min(int(env.RERANK_DEPTH, 30), 100)),
  };
}

const DEV_SIGNING_SECRET = "development-only-signing-secret-do-not-use-in-production";

/**
 * The HMAC key for signed URLs. Development and tests fall back to a fixed
 * key so nothing needs configuring; production refuses to run on it, because
 * anyone reading this file could forge upload and download URLs.
 */
export function signingSecret(env: Env): string {
  const secret = env.SIGNING_SECRET?.trim();
  if (secret) return secret;
  if (isProduction(env)) {
    throw new ApiError("service_unavailable", "SIGNING_SECRET is not configured; set it with `wrangler secret put SIGNING_SECRET`");
  }
  return DEV_SIGNING_SECRET;
}

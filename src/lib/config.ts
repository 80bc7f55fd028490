import { z } from "zod";
import type { Env } from "../env";
import { MAX_PBKDF2_ITERATIONS } from "./crypto";
import { ApiError } from "./errors";

/**
 * THE configuration: every variable of `Env` (README "Configuration"), parsed here and nowhere else, once per
 * `env` object (memoized on its identity: one parse per isolate). Each variable is checked by its own zod
 * schema; a bad value is a problem naming the variable. Entry points (the app's first middleware, the queue
 * and cron handlers, the Durable Objects) call `checkedConfig`, so a bad value fails at start-up with a 503
 * naming it instead of silently becoming the default; the accessors below (`config`, `ingestConfig`, ...)
 * never throw and read the default in its place.
 */

const text = (raw: string | undefined) => (raw === undefined || raw.trim() === "" ? undefined : raw.trim());

/** A number (the old readers took `Number(value)`): blank = the default. */
const num = z.string().transform((s, ctx) => {
  const n = Number(s);
  if (!Number.isFinite(n)) ctx.addIssue({ code: "custom", message: `must be a number (got '${s}')` });
  return n;
});
const wholePositive = z.string().transform((s, ctx) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n <= 0) ctx.addIssue({ code: "custom", message: `must be a positive whole number (got '${s}')` });
  return n;
});
const httpUrl = z.string().transform((s, ctx) => {
  let ok = false;
  try {
    ok = ["http:", "https:"].includes(new URL(s).protocol);
  } catch {
    ok = false;
  }
  if (!ok) ctx.addIssue({ code: "custom", message: `must be an http(s) URL (got '${s}')` });
  return s;
});
const oneOf = <T extends string>(values: readonly T[]) =>
  z.string().transform((s, ctx) => {
    const v = s.toLowerCase() as T;
    if (!values.includes(v)) ctx.addIssue({ code: "custom", message: `must be one of ${values.join(", ")} (got '${s}')` });
    return v;
  });
const jsonOf = <T extends z.ZodType>(schema: T, what: string) =>
  z.string().transform((s, ctx): z.infer<T> | undefined => {
    let value: unknown;
    try {
      value = JSON.parse(s);
    } catch {
      ctx.addIssue({ code: "custom", message: `must be JSON: ${what}` });
      return undefined;
    }
    const r = schema.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0];
      ctx.addIssue({ code: "custom", message: `must be ${what} (${issue?.path.join(".") || "value"}: ${issue?.message})` });
      return undefined;
    }
    return r.data;
  });

const Pricing = z.object({
  input_per_1k: z.number().min(0).max(1_000_000),
  output_per_1k: z.number().min(0).max(1_000_000),
});

/** One entry of MODELS (README "Models"). */
export const ConfiguredModel = z.object({
  id: z.string().min(1).max(200),
  display_name: z.string().min(1).max(200).optional(),
  provider: z.enum(["openai", "local"]).default("openai"),
  upstream_model: z.string().min(1).max(200).optional(),
  context_window: z.number().int().positive().default(128_000),
  pricing: Pricing,
});
export type ConfiguredModel = z.infer<typeof ConfiguredModel>;

const JsonObject = z.record(z.string(), z.unknown());

/** Default largest upload: 50 MiB (API-DECISIONS.md). */
export const DEFAULT_MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
/** Default weight of the hash embedder's leg in the fusion (README "Retrieval quality"). */
export const HASH_VECTOR_WEIGHT = 0.01;
/** Tool steps a tool-calling model may take in one turn (MAX_TOOL_STEPS). */
export const DEFAULT_MAX_TOOL_STEPS = 8;
/** Limit of one delegation to an external A2A agent (A2A_TIMEOUT_MS). */
export const DEFAULT_A2A_TIMEOUT_MS = 60_000;
/** Credits per 1,000 tokens of paid embedding calls (EMBEDDING_PRICE_PER_1K). */
export const DEFAULT_EMBEDDING_PRICE_PER_1K = 0.02;
export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";
/** What one local vector index object holds in memory (LOCAL_VECTOR_INDEX_MAX_MB); an isolate has 128 MB in production. */
export const DEFAULT_LOCAL_VECTOR_INDEX_MAX_MB = 64;
/** The DNS-over-HTTPS endpoint the URL guard checks resolved addresses with in production. */
export const DEFAULT_DOH_URL = "https://cloudflare-dns.com/dns-query";

type Parsed = ReturnType<typeof parse>;
const parsed = new WeakMap<object, Parsed>();

/** Reads every variable; a bad one is recorded in `problems` and its default used. */
function parse(env: Env) {
  const problems: string[] = [];
  function read<T, D>(name: keyof Env & string, schema: z.ZodType<T, string>, fallback: D): T | D {
    const raw = text(env[name] as string | undefined);
    if (raw === undefined) return fallback;
    const r = schema.safeParse(raw);
    if (r.success && r.data !== undefined) return r.data;
    problems.push(`${name} ${r.success ? "is not valid" : (r.error.issues[0]?.message ?? "is not valid")}`);
    return fallback;
  }
  const environment = read("ENVIRONMENT", oneOf(["development", "test", "production"] as const), "development" as const);
  const production = environment === "production";
  const rerankProvider = read("RERANK_PROVIDER", oneOf(["off", "http", "workers-ai"] as const), "off" as const);
  const dohRaw = read("URL_GUARD_DOH_URL", z.string(), undefined);
  const config = {
    environment,
    publicBaseUrl: read("PUBLIC_BASE_URL", httpUrl, "http://localhost:8787").replace(/\/+$/, ""),
    allowedOrigins: (env.ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((s) => s.trim().replace(/\/+$/, ""))
      .filter(Boolean),
    startingCredits: read("STARTING_CREDITS", num, 1000),
    startingTenantCredits: read("STARTING_TENANT_CREDITS", num, 500),
    loginThrottleMax: read("LOGIN_THROTTLE_MAX", num, 10),
    loginThrottleWindowSeconds: read("LOGIN_THROTTLE_WINDOW_SECONDS", num, 900),
    signupThrottleMax: read("SIGNUP_THROTTLE_MAX", num, 30),
    signupThrottleWindowSeconds: read("SIGNUP_THROTTLE_WINDOW_SECONDS", num, 3600),
    /** OAuth dynamic client registrations (POST /oauth/register) per client address and window; 0 = unlimited. */
    oauthRegisterThrottleMax: read("OAUTH_REGISTER_THROTTLE_MAX", num, 20),
    oauthRegisterThrottleWindowSeconds: read("OAUTH_REGISTER_THROTTLE_WINDOW_SECONDS", num, 3600),
    passwordIterations: read("PASSWORD_ITERATIONS", num, MAX_PBKDF2_ITERATIONS),
    localModelTokenDelayMs: Math.max(0, read("LOCAL_MODEL_TOKEN_DELAY_MS", num, 0)),
    sseHeartbeatMs: Math.max(1000, read("SSE_HEARTBEAT_MS", num, 15_000)),
    /** RATE_LIMITS=off disables per-caller rate limiting. */
    rateLimits: read("RATE_LIMITS", oneOf(["on", "off"] as const), "on" as const) !== "off",
    evalEndpoints: read("EVAL_ENDPOINTS", oneOf(["true", "false"] as const), "false" as const) === "true",
    emailWebhookUrl: read("EMAIL_WEBHOOK_URL", httpUrl, null),
    webSearchUrl: read("WEB_SEARCH_URL", httpUrl, null),
    models: {
      openaiBaseUrl: read("OPENAI_BASE_URL", httpUrl, DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, ""),
      openaiApiKey: env.OPENAI_API_KEY ?? "",
      /** MODELS, or null when unset. */
      configured: read("MODELS", jsonOf(z.array(ConfiguredModel), "a JSON array of models (README \"Models\")"), null),
      maxToolSteps: Math.min(Math.floor(read("MAX_TOOL_STEPS", num.refine((n) => n >= 0, "must be 0 or more"), DEFAULT_MAX_TOOL_STEPS)), 32),
    },
    a2aTimeoutMs: read("A2A_TIMEOUT_MS", num.refine((n) => n > 0, "must be more than 0"), DEFAULT_A2A_TIMEOUT_MS),
    ingest: {
      maxUploadBytes: read("MAX_UPLOAD_BYTES", num, DEFAULT_MAX_UPLOAD_BYTES),
      r2:
        env.R2_ACCOUNT_ID && env.R2_ACCESS_KEY_ID && env.R2_SECRET_ACCESS_KEY && env.R2_BUCKET_NAME
          ? { accountId: env.R2_ACCOUNT_ID, accessKeyId: env.R2_ACCESS_KEY_ID, secretAccessKey: env.R2_SECRET_ACCESS_KEY, bucketName: env.R2_BUCKET_NAME }
          : null,
      vectorIndex: read("VECTOR_INDEX", oneOf(["local", "vectorize"] as const), "local" as const),
      /** Memory one local vector index object holds its vectors in, MB (src/services/vector-index/local.ts). */
      localVectorIndexMaxMb: read("LOCAL_VECTOR_INDEX_MAX_MB", num.refine((n) => n > 0, "must be more than 0"), DEFAULT_LOCAL_VECTOR_INDEX_MAX_MB),
      retryBaseSeconds: Math.max(0, read("INGEST_RETRY_BASE_SECONDS", num, 10)),
    },
    embeddings: {
      /** Checked where the embedder is built (an unknown one fails there, as EmbeddingConfigError). */
      provider: text(env.EMBEDDING_PROVIDER)?.toLowerCase() ?? "hash",
      model: text(env.EMBEDDING_MODEL),
      dimensions: read("EMBEDDING_DIMENSIONS", wholePositive, undefined),
      baseURL: read("EMBEDDING_BASE_URL", httpUrl, undefined) ?? text(env.OPENAI_BASE_URL) ?? DEFAULT_OPENAI_BASE_URL,
      apiKey: text(env.EMBEDDING_API_KEY) ?? text(env.OPENAI_API_KEY) ?? "",
      pricePer1k: read("EMBEDDING_PRICE_PER_1K", num.refine((n) => n >= 0, "must be 0 or more"), DEFAULT_EMBEDDING_PRICE_PER_1K),
    },
    retrieval: retrieval(env, read, rerankProvider),
    urlGuard: {
      /** ALLOW_PRIVATE_URLS: `true`, `false` or a comma-separated host:port allowlist. */
      allowPrivate: (env.ALLOW_PRIVATE_URLS ?? "").trim(),
      /** null = no DNS check (URL_GUARD_DOH_URL=off; by default only production checks). */
      dohUrl: dohRaw ? (dohRaw.toLowerCase() === "off" ? null : dohRaw) : production ? DEFAULT_DOH_URL : null,
    },
    connectors: {
      credentials: (read("CONNECTORS", jsonOf(JsonObject, 'an object {"<slug>": {"client_id", "client_secret"}}'), null) ?? {}) as Record<string, unknown>,
      endpoints: (read("CONNECTOR_ENDPOINTS", jsonOf(JsonObject, 'an object {"<slug>": {"authorize_url", "token_url", "api_base_url"}}'), null) ?? {}) as Record<string, unknown>,
    },
  };
  if (dohRaw && dohRaw.toLowerCase() !== "off" && !httpUrl.safeParse(dohRaw).success) problems.push(`URL_GUARD_DOH_URL must be an http(s) URL or off (got '${dohRaw}')`);
  return { config, problems };
}

function retrieval<R extends (name: keyof Env & string, schema: z.ZodType<number, string>, fallback: number | null) => number | null>(
  env: Env,
  read: R,
  provider: "off" | "http" | "workers-ai",
) {
  const vectorWeight = read("RETRIEVAL_VECTOR_WEIGHT", num, null);
  return {
    /** Reciprocal rank fusion constant: score = weight / (k + rank). */
    rrfK: Math.max(1, read("RETRIEVAL_RRF_K", num, 60) ?? 60),
    lexicalWeight: 1,
    /** The vector leg's weight: RETRIEVAL_VECTOR_WEIGHT, else HASH_VECTOR_WEIGHT for the hash embedder and 1 for learned models. */
    vectorWeight: (embeddingProvider: string) => (vectorWeight === null ? (embeddingProvider === "hash" ? HASH_VECTOR_WEIGHT : 1) : Math.max(0, vectorWeight)),
    rerank: {
      provider,
      url: text(env.RERANK_URL),
      apiKey: text(env.RERANK_API_KEY),
      model: text(env.RERANK_MODEL),
      timeoutMs: Math.max(100, read("RERANK_TIMEOUT_MS", num, 5000) ?? 5000),
    },
    /** Fused passages handed to the reranker (at least the number asked for). */
    rerankDepth: Math.max(1, Math.min(read("RERANK_DEPTH", num, 30) ?? 30, 100)),
  };
}

function load(env: Env): Parsed {
  let p = parsed.get(env);
  if (!p) parsed.set(env, (p = parse(env)));
  return p;
}

export type Config = Parsed["config"];

/** A variable with a bad value: names each, so the service refuses to start on it (503). */
export class ConfigError extends ApiError {
  constructor(readonly problems: string[]) {
    super("service_unavailable", `The service is misconfigured: ${problems.join("; ")}`);
  }
}

/** The configuration, for an entry point: throws ConfigError naming every variable with a bad value. */
export function checkedConfig(env: Env): Config {
  const { config, problems } = load(env);
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** The configuration (a bad variable reads as its default here; entry points refuse it with `checkedConfig`). */
export function config(env: Env): Config {
  return load(env).config;
}

export function isProduction(env: Env): boolean {
  return config(env).environment === "production";
}

/** Documents and ingestion configuration (README "Documents"). */
export const ingestConfig = (env: Env) => config(env).ingest;

/** Retrieval configuration (README "Retrieval quality"). */
export const retrievalConfig = (env: Env) => config(env).retrieval;

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

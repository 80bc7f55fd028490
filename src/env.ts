/**
 * The Worker's bindings and configuration. Every variable is a string (Workers
 * vars and secrets); `src/lib/config.ts` parses them with defaults.
 */
export interface Env {
  DB: D1Database;
  ASSETS: Fetcher;
  /** Stored document files and their extracted text (R2). */
  BUCKET: R2Bucket;
  /** Document processing and cleanup (queue `kb-ingest`, consumed by this Worker). */
  INGEST_QUEUE: Queue<unknown>;
  /** The local vector index: one Durable Object per knowledge base. */
  LOCAL_VECTOR_INDEX: DurableObjectNamespace<DurableObjectOf<"LocalVectorIndex">>;
  /** Cloudflare Vectorize index (production; used when VECTOR_INDEX=vectorize). */
  VECTORIZE?: Vectorize;
  /** Workers AI (used when EMBEDDING_PROVIDER=workers-ai). */
  AI?: Ai;
  CHAT_SESSION: DurableObjectNamespace<DurableObjectOf<"ChatSession">>;
  /** The supervisor: one Durable Object whose alarm re-drives work whose lease lapsed (README "Crash safety"). */
  SUPERVISOR: DurableObjectNamespace<DurableObjectOf<"Supervisor">>;

  /** `development` (default), `test` or `production`. */
  ENVIRONMENT?: string;
  /** Benchmarks only (npm run bench:latency): milliseconds added to every D1 round trip (src/db/distance.ts). */
  SIMULATED_D1_RTT_MS?: string;
  /** Benchmarks only: milliseconds added to every Durable Object stub call (fetch, RPC) (src/lib/distance.ts). */
  SIMULATED_DO_RTT_MS?: string;
  /** Benchmarks only: milliseconds added to every R2 bucket operation (src/lib/distance.ts). */
  SIMULATED_R2_RTT_MS?: string;
  /** Benchmarks only: `1` logs every D1, Durable Object and R2 hop with the stack that made it. */
  SIMULATED_HOPS_TRACE?: string;
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
  OAUTH_REGISTER_THROTTLE_MAX?: string;
  OAUTH_REGISTER_THROTTLE_WINDOW_SECONDS?: string;
  /** Workers Rate Limiting binding: per API key and per user request budget (src/auth/rate-limit.ts). */
  RATE_LIMITER?: RateLimit;
  /** `off` disables per-caller rate limiting. */
  RATE_LIMITS?: string;
  /** PBKDF2 iterations for new password hashes (Workers caps PBKDF2 at 100,000). */
  PASSWORD_ITERATIONS?: string;
  /** OpenAI-compatible chat-completions endpoint (default https://api.openai.com/v1). */
  OPENAI_BASE_URL?: string;
  /** Secret. With no key, only the offline `local-extractive` model is available. */
  OPENAI_API_KEY?: string;
  /** JSON array of provider models with prices; see README "Models". */
  MODELS?: string;
  /** Optional SearXNG-compatible JSON search endpoint for `websearch_enable`. */
  WEB_SEARCH_URL?: string;
  /** Delay between the partial answers of local-extractive (ms), to exercise streaming. */
  LOCAL_MODEL_TOKEN_DELAY_MS?: string;
  /** Tool steps a tool-calling model may take per turn (default 8). */
  MAX_TOOL_STEPS?: string;
  /** SSE heartbeat interval (ms), default 15000. */
  SSE_HEARTBEAT_MS?: string;
  /** Optional: outgoing email is POSTed here as JSON; unset = logged. */
  EMAIL_WEBHOOK_URL?: string;

  // ---- Documents (see README "Documents") ----
  /** Secret: HMAC key of the Worker-signed upload and download URLs. A development fallback is refused in production. */
  SIGNING_SECRET?: string;
  /** Largest accepted upload in bytes (default 52428800 = 50 MiB). */
  MAX_UPLOAD_BYTES?: string;
  /** R2 S3 API credentials: when all four are set, upload URLs are R2 presigned S3 URLs. */
  R2_ACCOUNT_ID?: string;
  R2_ACCESS_KEY_ID?: string;
  R2_SECRET_ACCESS_KEY?: string;
  R2_BUCKET_NAME?: string;
  /** `hash` (default, offline), `openai` (any OpenAI-compatible server) or `workers-ai`. */
  EMBEDDING_PROVIDER?: string;
  /** Model id; defaults per provider (hash-v1, text-embedding-3-small, @cf/baai/bge-small-en-v1.5). */
  EMBEDDING_MODEL?: string;
  /** Vector dimension (hash default 512; openai: sent as `dimensions` when set). */
  EMBEDDING_DIMENSIONS?: string;
  /** OpenAI-compatible base URL and key for embeddings; fall back to OPENAI_BASE_URL / OPENAI_API_KEY. */
  EMBEDDING_BASE_URL?: string;
  EMBEDDING_API_KEY?: string;
  /** Credits per 1,000 tokens charged for paid embedding calls (openai, workers-ai); default 0.02. */
  EMBEDDING_PRICE_PER_1K?: string;
  /** `local` (default: a Durable Object per knowledge base) or `vectorize`. */
  VECTOR_INDEX?: string;
  /** Memory one local vector index object holds its vectors in (MB, default 64; src/services/vector-index/local.ts). */
  LOCAL_VECTOR_INDEX_MAX_MB?: string;
  /** `true` allows outbound fetches to private addresses (development only); or a comma-separated host:port allowlist. */
  ALLOW_PRIVATE_URLS?: string;
  /** DNS-over-HTTPS JSON endpoint used to check what a hostname resolves to (default Cloudflare's in production; `off` disables). */
  URL_GUARD_DOH_URL?: string;
  /** First retry delay of a failed processing attempt, in seconds (default 10; then x4 per attempt). */
  INGEST_RETRY_BASE_SECONDS?: string;

  // ---- Secrets (src/lib/secrets.ts) ----
  /** Secret: base64 of 32 random bytes; seals stored credentials and tokens (AES-256-GCM). */
  ENCRYPTION_KEY?: string;
  /** Secret: key ring for rotation, `kid:base64,kid:base64` (the first encrypts). Overrides ENCRYPTION_KEY. */
  ENCRYPTION_KEYS?: string;

  // ---- Retrieval (see README "Retrieval quality") ----
  /** `true` enables POST /api/v1/eval/search for `npm run eval:retrieval` (never in production). */
  EVAL_ENDPOINTS?: string;
  /** Reciprocal rank fusion constant (default 60). */
  RETRIEVAL_RRF_K?: string;
  /** Weight of the vector leg against the lexical leg's 1 (default 0.01 with the hash embedder, 1 with a learned model). */
  RETRIEVAL_VECTOR_WEIGHT?: string;
  /** `off` (default), `http` (a Cohere/Jina/TEI-style /rerank endpoint) or `workers-ai` (bge-reranker-base). */
  RERANK_PROVIDER?: string;
  /** The /rerank endpoint's full URL (RERANK_PROVIDER=http). */
  RERANK_URL?: string;
  /** Secret: bearer token for RERANK_URL. */
  RERANK_API_KEY?: string;
  /** Model name sent to the endpoint, or the Workers AI model (default @cf/baai/bge-reranker-base). */
  RERANK_MODEL?: string;
  /** Fused passages the reranker reorders (default 30, at most 100). */
  RERANK_DEPTH?: string;
  /** Give up on the reranker after this long and keep the fused order (default 5000 ms). */
  RERANK_TIMEOUT_MS?: string;

  // ---- Agents (src/services/agents) ----
  /** One Durable Object per scheduled agent: holds the alarm of its next occurrence. */
  AGENT_SCHEDULER: DurableObjectNamespace<DurableObjectOf<"AgentScheduler">>;

  // ---- External (A2A) agents (src/services/a2a) ----
  /** Limit of one delegation to an external A2A agent, ms (default 60000). */
  A2A_TIMEOUT_MS?: string;

  // ---- Connected data (see README "Connected data") ----
  /** One SQLite-backed Durable Object per knowledge base: the tables loaded from its CSV, XLSX and JSON documents. */
  KB_TABLES: DurableObjectNamespace<DurableObjectOf<"KbTables">>;

  // ---- Connectors (README "Connectors") ----
  /** Secret: JSON `{"<slug>": {"client_id", "client_secret"}}`, the OAuth app of each connector. */
  CONNECTORS?: string;
  /** JSON `{"<slug>": {"authorize_url", "token_url", "api_base_url"}}`: other endpoints for a connector (ignored in production). */
  CONNECTOR_ENDPOINTS?: string;

  // ---- OAuth for the knowledge-base MCP endpoint (src/services/mcp-oauth) ----
  /** Clients, grants and tokens of the OAuth authorization server (@cloudflare/workers-oauth-provider). */
  OAUTH_KV: KVNamespace;
}

/**
 * The Durable Object classes behind the bindings above, by name. This file only describes bindings: each
 * class registers its own type where it is defined, by declaration merging
 *
 *   declare module "../env" { interface DurableObjectClasses { ChatSession: ChatSession } }
 *
 * so a binding's stub is typed by its class (RPC methods included) while nothing below the entry points
 * imports the class itself.
 */
export interface DurableObjectClasses {}

/** The class registered under `name`, or a plain (fetch-only) Durable Object until it is. */
export type DurableObjectOf<K extends string> = K extends keyof DurableObjectClasses
  ? DurableObjectClasses[K] extends Rpc.DurableObjectBranded
    ? DurableObjectClasses[K]
    : undefined
  : undefined;

type AppBindings = Env;
declare global {
  // `cloudflare:test` types its `env` as Cloudflare.Env.
  namespace Cloudflare {
    interface Env extends AppBindings {}
  }
}

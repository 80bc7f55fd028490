import type { JSONSchema7 } from "ai";
import type { Passage } from "../../contracts/turn";

/**
 * One connector of the catalog (src/services/connectors/catalog/<slug>.ts):
 * what the catalog shows, the provider's real OAuth 2 endpoints and scopes,
 * how its token answer and account are read, and its read tools, each calling
 * the provider's documented API.
 */

export interface Endpoints {
  authorize_url: string;
  token_url: string;
  api_base_url: string;
}

export interface ClientCredentials {
  client_id: string;
  client_secret: string;
}

/** What a token endpoint gave us, normalized. */
export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  /** Seconds until the access token expires; null when it does not. */
  expiresIn: number | null;
  scope: string | null;
  /** The raw answer, for `identify` (Notion names the owner in it, Slack the user). */
  raw: Record<string, unknown>;
}

/** An authenticated caller of the provider's API for one connection. */
export interface ProviderApi {
  endpoints: Endpoints;
  /** Non-secret facts recorded at connection time (cloud id, team URL, ...). */
  extra: Record<string, unknown>;
  /** Fetches `path` (relative to api_base_url, or absolute under it) with the bearer token; throws ProviderError. */
  json<T = any>(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string>; query?: Record<string, string | number | undefined> }): Promise<T>;
  text(path: string, init?: { headers?: Record<string, string>; query?: Record<string, string | number | undefined> }): Promise<string>;
  signal: AbortSignal;
}

export interface ToolResult {
  /** What the model reads besides the passages. */
  text?: string;
  passages?: Passage[];
}

export interface ConnectorTool {
  name: string;
  description: string;
  inputSchema: JSONSchema7;
  execute(input: Record<string, unknown>, api: ProviderApi): Promise<ToolResult>;
}

export interface RevokeContext {
  endpoints: Endpoints;
  client: ClientCredentials;
  accessToken: string;
  refreshToken: string | null;
  /** The provider fetch (URL guard applied, no redirects followed, timeout). */
  fetch(url: string, init: RequestInit): Promise<Response>;
}

export interface Identity {
  /** Login or e-mail shown in status. */
  account: string | null;
  accountId: string | null;
  extra?: Record<string, unknown>;
}

export interface ConnectorDefinition {
  slug: string;
  name: string;
  description: string;
  logo: string;
  category: string;
  /** The provider's production endpoints (CONNECTOR_ENDPOINTS overrides them outside production). */
  endpoints: Endpoints;
  scopes: string[];
  /** Query parameter carrying the scopes (`user_scope` for Slack's user tokens). */
  scopeParam: string;
  scopeSeparator: string;
  /** S256 PKCE on authorize and token exchange. */
  pkce: boolean;
  /** Extra authorize parameters (offline access, consent, audience, owner). */
  authorizeParams?: Record<string, string>;
  /** How the client authenticates at the token endpoint, and the body's encoding. */
  tokenAuth: "body" | "basic";
  tokenEncoding: "form" | "json";
  /** Reads the token endpoint's answer (default: RFC 6749 fields at the top level). */
  parseToken?(json: Record<string, unknown>): TokenSet;
  /** Who the account is, from the provider's API (and the token answer). */
  identify(api: ProviderApi, token: TokenSet): Promise<Identity>;
  /** Revokes the grant at the provider, where it offers revocation. */
  revoke?(ctx: RevokeContext): Promise<void>;
  tools: ConnectorTool[];
}

/** The provider answered an error; `status` is its HTTP status. */
export class ProviderError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export const queryInput: JSONSchema7 = {
  type: "object",
  properties: { query: { type: "string", minLength: 1, maxLength: 500, description: "What to look for" } },
  required: ["query"],
  additionalProperties: false,
};

export function stringArg(input: Record<string, unknown>, name: string, max = 1000): string {
  const v = input[name];
  if (typeof v !== "string" || !v.trim()) throw new ProviderError(400, `${name} is required (a non-empty string)`);
  if (v.length > max) throw new ProviderError(400, `${name} is longer than ${max} characters`);
  return v.trim();
}

/** The `search` tool every connector offers: one `query` string of at most `max` characters. */
export function searchTool(description: string, max: number, run: (query: string, api: ProviderApi) => Promise<ToolResult>): ConnectorTool {
  return { name: "search", description, inputSchema: queryInput, execute: (input, api) => run(stringArg(input, "query", max), api) };
}

/** A tool that reads one item by the id given in the string field `field` (at most `max` characters). */
export function readTool(
  name: string,
  description: string,
  field: string,
  max: number,
  run: (id: string, api: ProviderApi) => Promise<ToolResult>,
): ConnectorTool {
  const inputSchema: JSONSchema7 = { type: "object", properties: { [field]: { type: "string" } }, required: [field], additionalProperties: false };
  return { name, description, inputSchema, execute: (input, api) => run(stringArg(input, field, max), api) };
}

/** HTTP Basic credentials of our OAuth client, for providers whose revocation endpoint wants them. */
export const basicAuth = (client: ClientCredentials) => `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`;

/** A citable passage for an item of a connected app (no document: `url` links back to the item). */
export function appPassage(opts: { slug: string; id: string; title: string; text: string; url: string | null; score?: number }): Passage {
  return {
    document_id: null,
    filename: opts.title.slice(0, 255),
    chunk_id: `${opts.slug}:${opts.id}`.slice(0, 255),
    text: opts.text.slice(0, 4000),
    score: opts.score ?? 1,
    page: null,
    url: opts.url,
  };
}

export const clip = (s: string | null | undefined, n = 1500) => {
  const t = (s ?? "").replace(/\s+\n/g, "\n").trim();
  return t.length > n ? `${t.slice(0, n)}…` : t;
};

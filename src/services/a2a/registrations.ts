import { and, asc, eq } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import type { Permission } from "../../auth/permissions";
import { may } from "../../auth/authorize";
import { redactHeaderValues } from "../../contracts/access";
import { knowledgeBaseRowScope } from "../../auth/resources";
import type { Database } from "../../db/client";
import { a2aAgents, type A2aAgent, type KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import { badRequest, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { decryptSecret, encryptSecret, SecretUnreadable } from "../../lib/secrets";
import { nowIso } from "../../lib/time";
import { knowledgeBaseFor } from "../knowledge-bases";
import { fetchAgentCard, parseCardUrl } from "./card";

/**
 * Registered external (A2A) agents of a knowledge base. `headers` and
 * `metadata` are sealed with the secrets helper (AAD `a2a_agent:<id>`) and
 * opened only to build a response for an authorized reader or to call the
 * agent; they are never logged.
 */

export const aadOf = (id: string) => `a2a_agent:${id}`;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the Worker's fetch sets itself, or that would change the request's framing. */
const FORBIDDEN_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive", "expect"]);
const MAX_SECRET_CHARS = 16_000;

/** `headers` as stored: a serialized JSON object of string values (400 naming body.headers otherwise). */
export function normalizeHeaders(input: unknown): string {
  const bad = (message: string) => badRequest(`headers: ${message}`, [{ path: "body.headers", message }]);
  let obj: unknown = input;
  if (typeof input === "string") {
    try {
      obj = JSON.parse(input);
    } catch {
      throw bad("Must be a serialized JSON object of string header values");
    }
  }
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) throw bad("Must be a serialized JSON object of string header values");
  const entries = Object.entries(obj as Record<string, unknown>);
  if (entries.length > 50) throw bad("At most 50 headers");
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) throw bad(`'${name.slice(0, 40)}' is not a valid header name`);
    if (FORBIDDEN_HEADERS.has(name.toLowerCase())) throw bad(`'${name}' cannot be set`);
    if (typeof value !== "string") throw bad(`The value of '${name}' must be a string`);
    if (/[\r\n\0]/.test(value)) throw bad(`The value of '${name}' contains a line break`);
  }
  const text = typeof input === "string" ? input : JSON.stringify(obj);
  if (text.length > MAX_SECRET_CHARS) throw bad(`At most ${MAX_SECRET_CHARS} characters`);
  return text;
}

/** `metadata` as stored: a string (an object is serialized). */
export function normalizeMetadata(input: unknown): string {
  const text = typeof input === "string" ? input : JSON.stringify(input);
  if (text.length > MAX_SECRET_CHARS) {
    throw badRequest("metadata is too long", [{ path: "body.metadata", message: `At most ${MAX_SECRET_CHARS} characters` }]);
  }
  return text;
}

/** Opens a sealed column; an unreadable one (key removed from the ring) reads as null rather than failing the request. */
async function open(env: Env, envelope: string | null, id: string): Promise<string | null> {
  if (!envelope) return null;
  try {
    return await decryptSecret(env, envelope, aadOf(id));
  } catch (e) {
    if (e instanceof SecretUnreadable) {
      console.error(`a2a_agent ${id}: a stored secret is unreadable (${e.message})`);
      return null;
    }
    throw e;
  }
}

/** The stored headers of a registration, as an object (for calls). */
export async function headersOf(env: Env, row: A2aAgent): Promise<Record<string, string>> {
  const text = await open(env, row.headersEnc, row.id);
  if (!text) return {};
  try {
    return JSON.parse(text) as Record<string, string>;
  } catch {
    return {};
  }
}

export async function metadataOf(env: Env, row: A2aAgent): Promise<string | null> {
  return open(env, row.metadataEnc, row.id);
}

/**
 * The API shape (authorized readers only: callers go through knowledgeBaseFor). `headers` hold
 * third-party credentials: decrypted only for readers who may change the registration
 * (`showSecrets`); everyone else gets the header names with the value "[redacted]".
 */
export async function publicA2aAgent(env: Env, row: A2aAgent, showSecrets: boolean) {
  const card = row.card;
  const headers = await open(env, row.headersEnc, row.id);
  return {
    id: row.id,
    knowledge_base_id: row.knowledgeBaseId,
    name: row.name,
    cardUrl: row.cardUrl,
    description: row.description,
    headers: showSecrets ? headers : redactHeaderValues(headers),
    metadata: await open(env, row.metadataEnc, row.id),
    card: card
      ? { name: card.name, description: card.description, url: card.url, version: card.version, protocol_version: card.protocol_version, skills: card.skills }
      : null,
    status: row.status,
    last_error: row.lastError,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export async function listA2aAgents(db: Database, kbId: string): Promise<A2aAgent[]> {
  return db.select().from(a2aAgents).where(eq(a2aAgents.knowledgeBaseId, kbId)).orderBy(asc(a2aAgents.createdAt), asc(a2aAgents.id)).all();
}

/** A registration of this knowledge base (404 for any other: never reveal another knowledge base's). */
export async function a2aAgentOf(db: Database, kb: KnowledgeBase, id: string): Promise<A2aAgent> {
  const row = await db
    .select()
    .from(a2aAgents)
    .where(and(eq(a2aAgents.id, id), eq(a2aAgents.knowledgeBaseId, kb.id), eq(a2aAgents.tenantId, kb.tenantId)))
    .get();
  if (!row) throw notFound("A2A agent");
  return row;
}

/** A registration of a knowledge base, the knowledge base authorized for `permission` (404 when either is missing or out of reach). */
export async function a2aAgentFor(ctx: ServiceContext, kbId: string, id: string, permission: Permission): Promise<A2aAgent> {
  const kb = await knowledgeBaseFor(ctx, kbId, permission);
  return a2aAgentOf(ctx.db, kb, id);
}

/** A knowledge base's registrations as the API shows them (headers and metadata decrypted). */
export async function publicA2aAgentsOf(env: Env, db: Database, kb: KnowledgeBase, showSecrets: boolean) {
  const rows = await listA2aAgents(db, kb.id);
  return { a2a_agents: await Promise.all(rows.map((r) => publicA2aAgent(env, r, showSecrets))) };
}

/** Whether this caller reads a knowledge base's registration secrets: only if it may change them. */
export const seesA2aSecrets = (ctx: ServiceContext, kb: KnowledgeBase) => may(ctx, "documents:write", knowledgeBaseRowScope({ ...kb, knowledgeBaseId: kb.id })!);

export interface A2aAgentInput {
  name?: string;
  cardUrl?: string;
  description?: string | null;
  headers?: unknown;
  metadata?: unknown;
}

export async function createA2aAgent(env: Env, db: Database, kb: KnowledgeBase, input: Required<Pick<A2aAgentInput, "name" | "cardUrl">> & A2aAgentInput, createdBy: string) {
  const url = parseCardUrl(input.cardUrl);
  const headers = input.headers === undefined || input.headers === null ? null : normalizeHeaders(input.headers);
  const metadata = input.metadata === undefined || input.metadata === null ? null : normalizeMetadata(input.metadata);
  // Refused (422/400) before anything is stored; fetched with the headers being registered.
  const card = await fetchAgentCard(env, url, headers === null ? {} : (JSON.parse(headers) as Record<string, string>));
  const id = newId("a2a");
  const at = nowIso();
  const row: A2aAgent = {
    id,
    organizationId: kb.organizationId,
    environmentId: kb.environmentId,
    tenantId: kb.tenantId,
    knowledgeBaseId: kb.id,
    name: input.name,
    cardUrl: url.toString(),
    description: input.description ?? null,
    headersEnc: headers === null ? null : await encryptSecret(env, headers, aadOf(id)),
    metadataEnc: metadata === null ? null : await encryptSecret(env, metadata, aadOf(id)),
    card,
    status: "ready",
    lastError: null,
    createdBy,
    createdAt: at,
    updatedAt: at,
  };
  await db.insert(a2aAgents).values(row);
  return row;
}

/** Partial change; a new cardUrl re-fetches and re-validates the card (refused changes change nothing). */
export async function updateA2aAgent(env: Env, db: Database, row: A2aAgent, input: A2aAgentInput): Promise<A2aAgent> {
  const set: Partial<A2aAgent> = { updatedAt: nowIso() };
  if (input.name !== undefined) set.name = input.name;
  if (input.description !== undefined) set.description = input.description;
  // The headers the card is fetched with: the new ones when they change in this request, else the stored ones.
  let headers: Record<string, string> | null = null;
  if (input.headers !== undefined) {
    const text = input.headers === null ? null : normalizeHeaders(input.headers);
    headers = text === null ? {} : (JSON.parse(text) as Record<string, string>);
    set.headersEnc = text === null ? null : await encryptSecret(env, text, aadOf(row.id));
  }
  if (input.metadata !== undefined) {
    set.metadataEnc = input.metadata === null ? null : await encryptSecret(env, normalizeMetadata(input.metadata), aadOf(row.id));
  }
  if (input.cardUrl !== undefined) {
    const url = parseCardUrl(input.cardUrl);
    if (url.toString() !== row.cardUrl || row.status === "error") {
      set.card = await fetchAgentCard(env, url, headers ?? (await headersOf(env, row)));
      set.cardUrl = url.toString();
      set.status = "ready";
      set.lastError = null;
    }
  }
  return (await db.update(a2aAgents).set(set).where(eq(a2aAgents.id, row.id)).returning().get())!;
}

export async function deleteA2aAgent(db: Database, row: A2aAgent): Promise<void> {
  await db.delete(a2aAgents).where(eq(a2aAgents.id, row.id));
}

/** After a call: `ready` on success, `error` with the reason on failure. */
export async function recordCallOutcome(db: Database, id: string, error: string | null): Promise<void> {
  await db
    .update(a2aAgents)
    .set(error ? { status: "error", lastError: error.slice(0, 1000) } : { status: "ready", lastError: null })
    .where(eq(a2aAgents.id, id));
}

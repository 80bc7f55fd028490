import { and, asc, desc, eq, or, sql, type SQL } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { loadAuthorized } from "../../auth/load";
import type { Permission } from "../../auth/permissions";
import { inKnowledgeBase, knowledgeBaseRowScope, type ResourceScope } from "../../auth/resources";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { artifactRevisions, artifacts, type Artifact, type ArtifactRevision, type ArtifactType, type ArtifactVisibility, type KnowledgeBase } from "../../db/schema";
import { config } from "../../lib/config";
import { ApiError, badRequest, conflict, notFound } from "../../lib/errors";
import { newId, randomBase32 } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { applyEdits, type ArtifactEdit } from "./edits";
import { pageOf, type Page } from "../../db/page";

/** Limits (specification, "Limits"); the content size is ours (D1 rows hold at most 2 MB). */
export const ARTIFACT_LIMITS = {
  title: 500,
  summary: 2_000,
  query: 200,
  editsMin: 1,
  editsMax: 50,
  contentBytes: 1_000_000,
} as const;

export const utf8Length = (s: string) => new TextEncoder().encode(s).length;

export function publicArtifact(a: Artifact, publicBaseUrl: string) {
  return {
    id: a.id,
    slug: a.slug,
    knowledge_base_id: a.knowledgeBaseId,
    tenant_id: a.tenantId,
    type: a.type,
    title: a.title,
    summary: a.summary,
    content: a.content,
    status: a.status,
    revision: a.revision,
    published: a.publishedVisibility
      ? { visibility: a.publishedVisibility, url: publishedUrl(a, publicBaseUrl), published_at: a.publishedAt! }
      : null,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

/** The API view of an artifact, with its published URL under PUBLIC_BASE_URL. */
export const artifactJson = (ctx: ServiceContext, a: Artifact) => publicArtifact(a, config(ctx.env).publicBaseUrl);

export const publishedUrl = (a: Pick<Artifact, "slug">, publicBaseUrl: string) => `${publicBaseUrl}/p/${a.slug}`;

export const artifactScope = (a: Artifact | undefined | null): ResourceScope | null => knowledgeBaseRowScope(a);

export const artifactArchived = () =>
  new ApiError("artifact_archived", "The artifact is archived; restore it first");

/**
 * The page slug: readable words of the title plus a random suffix, for example
 * `quarterly-report-4k9x2m`. It is fixed at creation (a renamed artifact keeps
 * its URL) and globally unique, because it is a public path.
 */
export function slugFor(title: string): string {
  const words = title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return `${words || "artifact"}-${randomBase32(6)}`;
}

/** By id or by slug, any status; callers decide what an archived one means. */
export async function findArtifact(db: Database, idOrSlug: string): Promise<Artifact | undefined> {
  return db
    .select()
    .from(artifacts)
    .where(or(eq(artifacts.id, idOrSlug), eq(artifacts.slug, idOrSlug)))
    .get();
}

/** An artifact by id or slug, authorized for `permission` by its knowledge base (404 when missing or out of reach). */
export async function artifactFor(ctx: ServiceContext, idOrSlug: string, permission: Permission): Promise<Artifact> {
  const artifact = await findArtifact(ctx.db, idOrSlug);
  return (await loadAuthorized(ctx, permission, artifact, (a) => artifactScope(a)!, { what: "Artifact" })).row;
}

/** `artifactFor`, for routes that serve active artifacts only (an archived one is 404). */
export async function activeArtifactFor(ctx: ServiceContext, idOrSlug: string, permission: Permission): Promise<Artifact> {
  const artifact = await artifactFor(ctx, idOrSlug, permission);
  if (artifact.status !== "active") throw notFound("Artifact");
  return artifact;
}

export type IncludeStatus = "active" | "archived" | "all";

export interface ArtifactListOptions {
  type?: ArtifactType;
  query?: string;
  includeStatus: IncludeStatus;
  limit: number;
  offset: number;
}

/** Artifacts of one knowledge base, most recently updated first. */
export async function listArtifacts(db: Database, knowledgeBaseId: string, opts: ArtifactListOptions) {
  const conditions: SQL[] = [eq(artifacts.knowledgeBaseId, knowledgeBaseId)];
  if (opts.includeStatus !== "all") conditions.push(eq(artifacts.status, opts.includeStatus));
  if (opts.type) conditions.push(eq(artifacts.type, opts.type));
  const q = opts.query?.trim();
  if (q) {
    // A literal substring match, case-insensitive for ASCII letters. Not LIKE: D1 caps LIKE patterns at
    // 50 bytes and a query may have 200 characters (and no wildcards to escape this way). Bounded by the
    // knowledge base, so a scan is acceptable.
    // Both sides go through SQLite's lower() so they fold the same way.
    const needle = sql`lower(${q})`;
    conditions.push(
      sql`(instr(lower(${artifacts.title}), ${needle}) > 0 OR instr(lower(${artifacts.summary}), ${needle}) > 0 OR instr(lower(${artifacts.content}), ${needle}) > 0)`,
    );
  }
  const where = and(...conditions);
  return pageOf(db, artifacts, where, [desc(artifacts.updatedAt), desc(artifacts.id)], opts);
}

export interface ArtifactInput {
  type: ArtifactType;
  title: string;
  summary: string;
  content: string;
}

function assertContentSize(content: string, path: string) {
  if (utf8Length(content) > ARTIFACT_LIMITS.contentBytes) {
    const message = `content would exceed ${ARTIFACT_LIMITS.contentBytes} bytes (UTF-8)`;
    throw new ApiError("payload_too_large", message, { details: [{ path, message }] });
  }
}

/** Creation is revision 1 (recorded by the insert trigger). */
export async function createArtifact(db: Database, kb: KnowledgeBase, input: ArtifactInput): Promise<Artifact> {
  assertContentSize(input.content, "body.content");
  const now = nowIso();
  for (let attempt = 0; ; attempt++) {
    const artifact: Artifact = {
      id: newId("art"),
      slug: slugFor(input.title),
      ...inKnowledgeBase(kb),
      type: input.type,
      title: input.title,
      summary: input.summary,
      content: input.content,
      status: "active",
      revision: 1,
      publishedVisibility: null,
      publishedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await db.insert(artifacts).values(artifact);
      return artifact;
    } catch (e) {
      // A slug collision (30 random bits per title): draw another suffix.
      if (!isUniqueViolation(e) || attempt >= 4) throw e;
    }
  }
}

export type ArtifactChange = { title?: string; summary?: string } | { edits: ArtifactEdit[] };

/** Retries after losing a compare-and-set race; each loss means another change was saved. */
const MAX_CAS_ATTEMPTS = 10;

/**
 * Applies one change as exactly one new revision. The UPDATE is a
 * compare-and-set on `revision` (and `status = 'active'`), so two concurrent
 * PATCHes can never both build on the same revision: the loser re-reads and
 * re-applies its change (edits are addressed by text, so they still mean the
 * same thing) or fails with 400 when they no longer apply.
 */
export async function changeArtifact(db: Database, artifact: Artifact, change: ArtifactChange): Promise<Artifact> {
  let current: Artifact | undefined = artifact;
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    if (!current) throw notFound("Artifact");
    if (current.status !== "active") throw artifactArchived();
    const set: Partial<Artifact> = { revision: current.revision + 1, updatedAt: nowIso() };
    if ("edits" in change) {
      const content = applyEdits(current.content, change.edits);
      if (content.trim() === "") {
        throw badRequest("The edits would leave the content empty; no edit was applied", [
          { path: "body.edits", message: "The resulting content must not be empty" },
        ]);
      }
      assertContentSize(content, "body.edits");
      set.content = content;
    } else {
      if (change.title !== undefined) set.title = change.title;
      if (change.summary !== undefined) set.summary = change.summary;
    }
    const row = await db
      .update(artifacts)
      .set(set)
      .where(and(eq(artifacts.id, current.id), eq(artifacts.revision, current.revision), eq(artifacts.status, "active")))
      .returning()
      .get();
    if (row) return row;
    current = await db.select().from(artifacts).where(eq(artifacts.id, artifact.id)).get();
  }
  throw conflict("conflict", "The artifact is being changed by others at the same time; retry the request");
}

/** Archive and restore are idempotent and keep the revisions (and the publication, served only while active). */
export async function setArtifactStatus(db: Database, artifact: Artifact, status: Artifact["status"]): Promise<Artifact> {
  const row = await db
    .update(artifacts)
    .set({ status, updatedAt: nowIso() })
    .where(and(eq(artifacts.id, artifact.id), sql`${artifacts.status} <> ${status}`))
    .returning()
    .get();
  return row ?? (await db.select().from(artifacts).where(eq(artifacts.id, artifact.id)).get()) ?? artifact;
}

/**
 * Publishing again changes the visibility and keeps the first `published_at`.
 * The status check is in the UPDATE: an archive racing a publish cannot leave
 * an archived artifact newly published.
 */
export async function publishArtifact(db: Database, artifact: Artifact, visibility: ArtifactVisibility): Promise<Artifact> {
  const now = nowIso();
  const row = await db
    .update(artifacts)
    .set({ publishedVisibility: visibility, publishedAt: sql`COALESCE(${artifacts.publishedAt}, ${now})` })
    .where(and(eq(artifacts.id, artifact.id), eq(artifacts.status, "active")))
    .returning()
    .get();
  if (!row) throw artifactArchived();
  return row;
}

export async function unpublishArtifact(db: Database, artifact: Artifact): Promise<void> {
  await db.update(artifacts).set({ publishedVisibility: null, publishedAt: null }).where(eq(artifacts.id, artifact.id));
}

export function listRevisions(db: Database, artifactId: string, page: Page) {
  return pageOf(db, artifactRevisions, eq(artifactRevisions.artifactId, artifactId), [asc(artifactRevisions.revision)], page);
}

export const publicRevision = (r: ArtifactRevision) => ({
  revision: r.revision,
  title: r.title,
  summary: r.summary,
  content: r.content,
  created_at: r.createdAt,
});

/** The artifact behind a hosted page: published and active, else undefined. */
export async function findPublishedArtifact(db: Database, slug: string): Promise<Artifact | undefined> {
  const a = await db.select().from(artifacts).where(eq(artifacts.slug, slug)).get();
  return a && a.status === "active" && a.publishedVisibility ? a : undefined;
}

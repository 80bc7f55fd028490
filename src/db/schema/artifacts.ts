import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, timestamps } from "./columns";
import { knowledgeBases } from "./knowledge-bases";
import { tenantOwned } from "./owned";

export const ARTIFACT_TYPES = ["markdown", "html"] as const;
export const ARTIFACT_STATUSES = ["active", "archived"] as const;
export const ARTIFACT_VISIBILITIES = ["private", "public"] as const;

export type ArtifactType = (typeof ARTIFACT_TYPES)[number];
export type ArtifactVisibility = (typeof ARTIFACT_VISIBILITIES)[number];

export const artifacts = sqliteTable("artifacts", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull().unique(),
  ...tenantOwned(),
  knowledgeBaseId: text("knowledge_base_id").notNull().references(() => knowledgeBases.id, { onDelete: "cascade" }),
  type: text("type", { enum: ARTIFACT_TYPES }).notNull(),
  title: text("title").notNull(),
  summary: text("summary").notNull(),
  content: text("content").notNull(),
  status: text("status", { enum: ARTIFACT_STATUSES }).notNull().default("active"),
  revision: integer("revision").notNull().default(1),
  publishedVisibility: text("published_visibility", { enum: ARTIFACT_VISIBILITIES }),
  publishedAt: text("published_at"),
  ...timestamps(),
});

/** Written only by the triggers of migrations/0004_skills_artifacts.sql. */
export const artifactRevisions = sqliteTable(
  "artifact_revisions",
  {
    artifactId: text("artifact_id").notNull().references(() => artifacts.id, { onDelete: "cascade" }),
    revision: integer("revision").notNull(),
    title: text("title").notNull(),
    summary: text("summary").notNull(),
    content: text("content").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.artifactId, t.revision] })],
);

export type Artifact = typeof artifacts.$inferSelect;
export type ArtifactRevision = typeof artifactRevisions.$inferSelect;

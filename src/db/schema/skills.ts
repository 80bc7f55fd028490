import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, timestamps } from "./columns";
import { tenants } from "./organizations";
import { tenantOwned } from "./owned";

export const SKILL_STATUSES = ["active", "archived"] as const;

export const skillTemplates = sqliteTable("skill_templates", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  description: text("description").notNull(),
  body: text("body").notNull(),
  version: integer("version").notNull().default(1),
  category: text("category").notNull(),
  status: text("status", { enum: ["active", "retired"] }).notNull().default("active"),
  sortOrder: integer("sort_order").notNull().default(0),
  ...timestamps(),
});

export const skills = sqliteTable("skills", {
  id: text("id").primaryKey(),
  ...tenantOwned(),
  name: text("name").notNull(),
  description: text("description").notNull(),
  body: text("body").notNull(),
  status: text("status", { enum: SKILL_STATUSES }).notNull().default("active"),
  templateId: text("template_id").references(() => skillTemplates.id, { onDelete: "set null" }),
  templateVersion: integer("template_version"),
  ...timestamps(),
});

export const skillTemplateFavorites = sqliteTable(
  "skill_template_favorites",
  {
    tenantId: text("tenant_id").notNull().references(() => tenants.id, { onDelete: "cascade" }),
    templateId: text("template_id").notNull().references(() => skillTemplates.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.templateId] })],
);

export type SkillTemplate = typeof skillTemplates.$inferSelect;
export type Skill = typeof skills.$inferSelect;

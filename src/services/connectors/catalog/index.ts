import type { ConnectorDefinition } from "../types";
import { github } from "./github";
import { googleDrive } from "./google-drive";
import { jira } from "./jira";
import { linear } from "./linear";
import { notion } from "./notion";
import { slack } from "./slack";

/** THE catalog, in display order. A new connector = one file here + one line. */
export const CATALOG: readonly ConnectorDefinition[] = [github, googleDrive, notion, slack, linear, jira];

const bySlug = new Map(CATALOG.map((c) => [c.slug, c]));
export const connectorBySlug = (slug: string): ConnectorDefinition | undefined => bySlug.get(slug);

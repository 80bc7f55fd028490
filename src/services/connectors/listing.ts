import type { Env } from "../../env";
import { CATALOG, connectorBySlug } from "./catalog";
import { clientCredentials } from "./config";
import type { ConnectorDefinition } from "./types";

/** The connector catalog as the API lists it (slug, name, description, logo, category). */

export function catalogEntry(env: Env, def: ConnectorDefinition) {
  return {
    slug: def.slug,
    name: def.name,
    description: def.description,
    logo: def.logo,
    category: def.category,
    auth: "oauth2" as const,
    available: clientCredentials(env, def.slug) !== null,
    tools: def.tools.map((t) => ({ name: t.name, description: t.description })),
  };
}

/** One page of the catalog's definitions (shown with `catalogEntry`). */
export function listCatalog(page: { offset: number; limit: number }) {
  return { rows: CATALOG.slice(page.offset, page.offset + page.limit), total: CATALOG.length };
}

export function catalogBySlugs(env: Env, slugs: string[]) {
  const seen = new Set<string>();
  const out = [];
  for (const s of slugs) {
    const def = connectorBySlug(s);
    if (def && !seen.has(s)) {
      seen.add(s);
      out.push(catalogEntry(env, def));
    }
  }
  return out;
}

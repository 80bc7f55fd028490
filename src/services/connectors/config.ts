import type { Env } from "../../env";
import { config, isProduction } from "../../lib/config";
import type { ClientCredentials, ConnectorDefinition, Endpoints } from "./types";

/**
 * Connector configuration:
 * - `CONNECTORS` (secret): `{"<slug>": {"client_id", "client_secret"}}`, the OAuth app of each connector; a
 *   connector is `available` once its pair is set.
 * - `CONNECTOR_ENDPOINTS`: `{"<slug>": {"authorize_url", "token_url", "api_base_url"}}` points a connector at
 *   another server (a local double in tests). Ignored in production: there every connector talks to its
 *   provider's real endpoints.
 */

export function clientCredentials(env: Env, slug: string): ClientCredentials | null {
  const entry = config(env).connectors.credentials[slug] as Partial<ClientCredentials> | undefined;
  if (!entry || typeof entry.client_id !== "string" || typeof entry.client_secret !== "string" || !entry.client_id || !entry.client_secret) return null;
  return { client_id: entry.client_id, client_secret: entry.client_secret };
}

export function endpointsOf(env: Env, def: ConnectorDefinition): Endpoints {
  if (isProduction(env)) return def.endpoints;
  const o = config(env).connectors.endpoints[def.slug] as Partial<Endpoints> | undefined;
  if (!o || typeof o !== "object") return def.endpoints;
  const pick = (k: keyof Endpoints) => (typeof o[k] === "string" && o[k] ? (o[k] as string).replace(/\/+$/, "") : def.endpoints[k]);
  return { authorize_url: pick("authorize_url"), token_url: pick("token_url"), api_base_url: pick("api_base_url") };
}

import type { StoredAgentCard } from "../../db/schema";
import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";
import { guardedFetch } from "../../lib/url-guard";

/**
 * Fetching and validating an external agent's card (API-DECISIONS "External
 * (A2A) agents"): through the URL guard, as JSON, and shaped like an A2A 1.0
 * card (name, description, version, supportedInterfaces[{url, protocolBinding,
 * protocolVersion}], skills) or a 0.3 card (`url`, `protocolVersion`,
 * `preferredTransport`). Only the JSON-RPC binding is spoken.
 */

const CARD_MAX_BYTES = 512 * 1024;
const CARD_TIMEOUT_MS = 15_000;
export const WELL_KNOWN_CARD_PATH = "/.well-known/agent-card.json";

const invalidCard = (why: string) => new ApiError("invalid_agent_card", `Not an A2A agent card: ${why}`);

/** The card URL as typed: http(s) only; a bare origin means its well-known card path. */
export function parseCardUrl(input: string, path = "body.cardUrl"): URL {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new ApiError("invalid_request", `'${input}' is not a valid URL`, { details: [{ path, message: "Invalid URL" }] });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ApiError("invalid_request", "cardUrl must be an http or https URL", { details: [{ path, message: "Only http and https URLs" }] });
  }
  url.hash = "";
  if (url.pathname === "/" || url.pathname === "") url.pathname = WELL_KNOWN_CARD_PATH;
  return url;
}

const str = (v: unknown): v is string => typeof v === "string";
const httpUrl = (v: unknown): boolean => {
  if (!str(v)) return false;
  try {
    const u = new URL(v);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
};
const isLegacy = (version: string) => /^0\./.test(version);

/** Validates a parsed card; returns what the API shows and what delegation needs. */
export function validateCard(raw: unknown): StoredAgentCard {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalidCard("the document is not a JSON object");
  const c = raw as Record<string, unknown>;
  if (!str(c.name) || !c.name.trim()) throw invalidCard("`name` is missing");
  if (!str(c.description)) throw invalidCard("`description` is missing");
  if (!str(c.version)) throw invalidCard("`version` is missing");
  if (!Array.isArray(c.skills)) throw invalidCard("`skills` is missing");
  const skills = c.skills.map((s, i) => {
    if (!s || typeof s !== "object") throw invalidCard(`skills[${i}] is not an object`);
    const k = s as Record<string, unknown>;
    if (!str(k.id) || !str(k.name)) throw invalidCard(`skills[${i}] needs an id and a name`);
    return {
      id: k.id,
      name: k.name,
      description: str(k.description) ? k.description : "",
      tags: Array.isArray(k.tags) ? k.tags.filter(str) : [],
    };
  });

  // Interfaces: 1.0 lists them; 0.3 has a main `url` (+ preferredTransport) and additionalInterfaces.
  type Iface = { url: string; binding: string; version: string };
  const ifaces: Iface[] = [];
  if (Array.isArray(c.supportedInterfaces)) {
    for (const [i, f] of c.supportedInterfaces.entries()) {
      const x = (f ?? {}) as Record<string, unknown>;
      if (!httpUrl(x.url) || !str(x.protocolBinding) || !str(x.protocolVersion)) {
        throw invalidCard(`supportedInterfaces[${i}] needs an http(s) url, a protocolBinding and a protocolVersion`);
      }
      ifaces.push({ url: x.url as string, binding: x.protocolBinding, version: x.protocolVersion });
    }
  } else if (httpUrl(c.url)) {
    const version = str(c.protocolVersion) ? c.protocolVersion : "0.3.0";
    ifaces.push({ url: c.url as string, binding: str(c.preferredTransport) ? c.preferredTransport : "JSONRPC", version });
    if (Array.isArray(c.additionalInterfaces)) {
      for (const f of c.additionalInterfaces) {
        const x = (f ?? {}) as Record<string, unknown>;
        if (httpUrl(x.url) && str(x.transport)) ifaces.push({ url: x.url as string, binding: x.transport, version });
      }
    }
  } else {
    throw invalidCard("neither `supportedInterfaces` (A2A 1.0) nor `url` (A2A 0.3) is present");
  }
  const jsonRpc = ifaces.filter((f) => f.binding.toUpperCase() === "JSONRPC");
  const chosen = jsonRpc.find((f) => f.version === "1.0") ?? jsonRpc.find((f) => !isLegacy(f.version)) ?? jsonRpc[0];
  if (!chosen) throw invalidCard("the agent offers no JSON-RPC interface");
  return {
    name: c.name.trim(),
    description: c.description,
    url: chosen.url,
    version: c.version,
    protocol_version: chosen.version,
    skills,
    raw: c,
  };
}

/**
 * GETs the card through the URL guard with the registration's stored headers (a card behind the same
 * credentials as the agent; not sent on a redirect to another origin). 422 fetch_failed when
 * unreachable, 422 invalid_agent_card when not a card.
 */
export async function fetchAgentCard(env: Env, url: URL, headers: Record<string, string> = {}): Promise<StoredAgentCard> {
  const page = await guardedFetch(env, url, { accept: "application/json", maxBytes: CARD_MAX_BYTES, timeoutMs: CARD_TIMEOUT_MS, headers });
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(page.body));
  } catch {
    throw invalidCard("the document is not JSON");
  }
  return validateCard(parsed);
}

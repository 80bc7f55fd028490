import type { Env } from "../../env";
import { isProduction } from "../../lib/config";
import { assertUrlAllowed, guardPolicy } from "../../lib/url-guard";
import { ProviderError, type Endpoints, type ProviderApi } from "./types";

/** Every call to a provider: 20 s, no redirects followed, the URL guard applied (a local double must be allowed). */
export const PROVIDER_TIMEOUT_MS = 20_000;
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

export function providerFetch(env: Env, signal?: AbortSignal) {
  return async (url: string, init: RequestInit = {}): Promise<Response> => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new ProviderError(500, "The connector's endpoint is not a valid URL");
    }
    if (isProduction(env) && u.protocol !== "https:") throw new ProviderError(500, "Connector endpoints must use https in production");
    try {
      assertUrlAllowed(u, guardPolicy(env));
    } catch {
      throw new ProviderError(500, `The connector's endpoint ${u.host} is not an allowed address`);
    }
    const timeout = AbortSignal.timeout(PROVIDER_TIMEOUT_MS);
    try {
      return await fetch(u.toString(), {
        ...init,
        redirect: "manual",
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        headers: { "User-Agent": "kb-chat-service/1.0 (connectors)", ...(init.headers as Record<string, string>) },
      });
    } catch (e) {
      if (timeout.aborted) throw new ProviderError(504, `${u.host} did not answer within ${PROVIDER_TIMEOUT_MS / 1000} s`);
      if (signal?.aborted) throw e;
      throw new ProviderError(502, `Could not reach ${u.host}`);
    }
  };
}

async function readLimited(res: Response): Promise<string> {
  const text = await res.text();
  if (text.length > MAX_RESPONSE_BYTES) throw new ProviderError(502, "The provider's answer is too large");
  return text;
}

function withQuery(url: string, query?: Record<string, string | number | undefined>): string {
  if (!query) return url;
  const u = new URL(url);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
  return u.toString();
}

/** An API client for one access token. Paths are relative to api_base_url; nothing outside it is reached. */
export function providerApi(env: Env, endpoints: Endpoints, accessToken: string, extra: Record<string, unknown>, signal: AbortSignal): ProviderApi {
  const doFetch = providerFetch(env, signal);
  const urlOf = (path: string) => `${endpoints.api_base_url}${path.startsWith("/") ? path : `/${path}`}`;
  const send = async (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string>; query?: Record<string, string | number | undefined> }, accept: string) => {
    const res = await doFetch(withQuery(urlOf(path), init.query), {
      method: init.method ?? "GET",
      headers: {
        Accept: accept,
        Authorization: `Bearer ${accessToken}`,
        ...(init.body !== undefined ? { "Content-Type": "application/json" } : {}),
        ...init.headers,
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
    });
    const text = await readLimited(res);
    if (res.status === 401) throw new ProviderError(401, "The provider refused the connection's token", "unauthorized");
    if (!res.ok) {
      let detail = "";
      try {
        const j = JSON.parse(text);
        detail = String(j.message ?? j.error_description ?? j.error?.message ?? j.error ?? j.errorMessages?.[0] ?? "");
      } catch {
        /* not JSON */
      }
      throw new ProviderError(res.status, `The provider answered ${res.status}${detail ? `: ${detail.slice(0, 200)}` : ""}`);
    }
    return text;
  };
  return {
    endpoints,
    extra,
    signal,
    async json(path, init = {}) {
      const text = await send(path, init, "application/json");
      try {
        return JSON.parse(text);
      } catch {
        throw new ProviderError(502, "The provider answered something that is not JSON");
      }
    },
    text: (path, init = {}) => send(path, init, "*/*"),
  };
}

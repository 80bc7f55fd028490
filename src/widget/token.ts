import type { WidgetConfig } from "./config";

/** An embed token from the page's own backend (data-token-url), with what it is for. */
export interface Token {
  token: string;
  exp: number;
  tenantId: string;
  kbId: string;
}

/**
 * The API, called with an embed token that the page's backend mints (POST data-token-url, same-origin
 * cookies). The token is refreshed a minute before it expires while the panel is open, and once more when
 * the API answers 401.
 */
export class ApiClient {
  private tok: Token | null = null;
  private pending: Promise<Token> | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly cfg: WidgetConfig,
    private readonly panelOpen: () => boolean,
  ) {}

  /** True when the token runs out within `ms`. */
  expiresWithin(ms: number): boolean {
    return !!this.tok && this.tok.exp - Date.now() < ms;
  }

  token(force = false): Promise<Token> {
    if (!force && this.tok && this.tok.exp - Date.now() > 30_000) return Promise.resolve(this.tok);
    this.pending ??= this.fetchToken().finally(() => (this.pending = null));
    return this.pending;
  }

  private async fetchToken(): Promise<Token> {
    const res = await fetch(this.cfg.tokenUrl, { method: "POST", credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`The chat is unavailable (token endpoint answered ${res.status})`);
    const j = (await res.json()) as { token?: unknown; expires_at?: string; tenant_id?: string; knowledge_base_id?: string } | null;
    if (!j || typeof j.token !== "string") throw new Error("The chat is unavailable (no token)");
    const exp = Date.parse(j.expires_at ?? "") || Date.now() + 60_000;
    const tok: Token = { token: j.token, exp, tenantId: j.tenant_id || this.cfg.tenantId || "", kbId: j.knowledge_base_id || this.cfg.knowledgeBaseId || "" };
    this.tok = tok;
    // Refresh a minute before expiry (or at 80% of a short lifetime) while the panel is open.
    clearTimeout(this.refreshTimer);
    const lifetime = exp - Date.now();
    this.refreshTimer = setTimeout(
      () => {
        if (this.panelOpen()) this.token(true).catch(() => {});
      },
      Math.max(5_000, Math.min(lifetime - 60_000, lifetime * 0.8)),
    );
    return tok;
  }

  /** A call to /api/v1 + path with the token; a 401 fetches a new token and tries once more. */
  async call(path: string, init: RequestInit = {}, retry = true): Promise<Response> {
    const t = await this.token();
    const headers = { ...(init.headers as Record<string, string> | undefined), Authorization: `Bearer ${t.token}` };
    const res = await fetch(this.cfg.api + path, { ...init, credentials: "omit", headers });
    if (res.status === 401 && retry) {
      await this.token(true);
      return this.call(path, init, false);
    }
    return res;
  }
}

/** The API's own words for a refusal, or the status. */
export async function errorOf(res: Response): Promise<string> {
  try {
    const j = (await res.json()) as { error?: { message?: string } } | null;
    return j?.error?.message || `Request failed (${res.status})`;
  } catch {
    return `Request failed (${res.status})`;
  }
}

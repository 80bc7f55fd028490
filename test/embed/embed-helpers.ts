import { API, call, expectStatus, fetchWorker, type Auth } from "../helpers";

export const SITE = "https://shop.example.com";

export interface Minted {
  token: string;
  expires_at: string;
  id: string;
  tenant_id: string;
  knowledge_base_id: string;
  external_subject_id: string | null;
  allowed_origins: string[];
}

/** Mints an embed token for `kb` (201 expected). */
export async function mint(auth: Auth, kb: { id: string; tenant_id: string }, extra: Record<string, unknown> = {}): Promise<Minted> {
  const r = await call("/embed/tokens", { ...auth, body: { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, allowed_origins: [SITE], ...extra } });
  return expectStatus(r, 201);
}

/** A call with an embed token from a browser page at `origin` (null: no Origin header). */
export function asPage(token: string, origin: string | null = SITE, headers: Record<string, string> = {}) {
  return { key: token, headers: origin ? { Origin: origin, ...headers } : headers };
}

/** Streams a message with an embed token from `origin`; returns the raw response. */
export function streamAsPage(token: string, chatId: string, body: Record<string, unknown>, origin: string | null = SITE) {
  const headers: Record<string, string> = { "Content-Type": "application/json", Authorization: `Bearer ${token}` };
  if (origin) headers.Origin = origin;
  return fetchWorker(`${API}/chats/${chatId}/messages/stream`, { method: "POST", headers, body: JSON.stringify(body) });
}

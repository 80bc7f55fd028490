import { appPassage, clip, ProviderError, readTool, searchTool, type ConnectorDefinition, type ProviderApi } from "../types";
import { badge } from "./logo";

/**
 * Google Drive (developers.google.com/identity/protocols/oauth2/web-server): authorization code with S256 PKCE,
 * `access_type=offline` + `prompt=consent` for a refresh token, revocation at oauth2.googleapis.com/revoke.
 * Drive API v3: files.list with a `fullText contains` query, files.get (`alt=media`) and files.export for
 * Google Docs, Sheets and Slides; about.get for the account's e-mail.
 */
const EXPORTS: Record<string, string> = {
  "application/vnd.google-apps.document": "text/plain",
  "application/vnd.google-apps.presentation": "text/plain",
  "application/vnd.google-apps.spreadsheet": "text/csv",
};
const FIELDS = "id,name,mimeType,webViewLink,modifiedTime";

async function readContent(api: ProviderApi, file: { id: string; mimeType: string }): Promise<string | null> {
  const id = encodeURIComponent(file.id);
  if (EXPORTS[file.mimeType]) return api.text(`/drive/v3/files/${id}/export`, { query: { mimeType: EXPORTS[file.mimeType] } });
  if (file.mimeType.startsWith("text/") || file.mimeType === "application/json") return api.text(`/drive/v3/files/${id}`, { query: { alt: "media" } });
  return null;
}

export const googleDrive: ConnectorDefinition = {
  slug: "google-drive",
  name: "Google Drive",
  description: "Search your Drive and read Google Docs, Sheets, Slides and text files.",
  logo: badge("GD", "#1a73e8"),
  category: "files",
  endpoints: {
    authorize_url: "https://accounts.google.com/o/oauth2/v2/auth",
    token_url: "https://oauth2.googleapis.com/token",
    api_base_url: "https://www.googleapis.com",
  },
  scopes: ["https://www.googleapis.com/auth/drive.readonly", "openid", "email"],
  scopeParam: "scope",
  scopeSeparator: " ",
  pkce: true,
  authorizeParams: { access_type: "offline", prompt: "consent", include_granted_scopes: "true", response_type: "code" },
  tokenAuth: "body",
  tokenEncoding: "form",
  async identify(api) {
    const about = await api.json<{ user?: { emailAddress?: string; permissionId?: string; displayName?: string } }>("/drive/v3/about", {
      query: { fields: "user(emailAddress,permissionId,displayName)" },
    });
    return { account: about.user?.emailAddress ?? about.user?.displayName ?? null, accountId: about.user?.permissionId ?? null };
  },
  async revoke({ endpoints, accessToken, refreshToken, fetch }) {
    // Revoking the refresh token revokes the whole grant (and its access tokens).
    const url = endpoints.token_url.replace(/\/token$/, "/revoke");
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: refreshToken ?? accessToken }).toString(),
    });
    if (!res.ok && res.status !== 400) throw new ProviderError(res.status, `Google answered ${res.status} to the revocation`);
  },
  tools: [
    searchTool("Search Google Drive by file name and content; returns the best matches with an excerpt of the top ones.", 500, async (query, api) => {
      const escaped = query.replace(/\\/g, "\\\\").replace(/'/g, "\\'");
      const r = await api.json<{ files: Array<{ id: string; name: string; mimeType: string; webViewLink?: string; modifiedTime?: string }> }>("/drive/v3/files", {
        query: { q: `fullText contains '${escaped}' and trashed = false`, pageSize: 10, fields: `files(${FIELDS})`, orderBy: undefined },
      });
      const passages = [];
      for (const [i, f] of r.files.entries()) {
        // The three best get an excerpt of their content, so an answer can cite what they say.
        const content = i < 3 ? await readContent(api, f).catch(() => null) : null;
        passages.push(
          appPassage({ slug: "google-drive", id: f.id, title: f.name, text: content ? `${f.name}\n${clip(content)}` : `${f.name} (${f.mimeType})`, url: f.webViewLink ?? `https://drive.google.com/file/d/${f.id}/view`, score: 1 / (i + 1) }),
        );
      }
      return { text: `${passages.length} file(s) in Google Drive.`, passages };
    }),
    readTool("read_file", "Read a Google Drive file by id (Google Docs, Sheets and Slides are exported as text).", "file_id", 200, async (id, api) => {
      const f = await api.json<{ id: string; name: string; mimeType: string; webViewLink?: string }>(`/drive/v3/files/${encodeURIComponent(id)}`, { query: { fields: FIELDS } });
      const content = await readContent(api, f);
      if (content === null) throw new ProviderError(400, `${f.name} is a ${f.mimeType} file, which cannot be read as text`);
      return { passages: [appPassage({ slug: "google-drive", id: f.id, title: f.name, text: clip(content, 4000), url: f.webViewLink ?? `https://drive.google.com/file/d/${f.id}/view` })] };
    }),
  ],
};

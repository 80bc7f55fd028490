import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { escapeHtml as e, htmlDocument, PAGE_SECURITY_HEADERS, READABLE_CSS } from "../../lib/html";
import type { ConsentTenant } from "../../services/mcp-oauth/consent";

/**
 * The server-rendered pages of the OAuth consent step (GET/POST /oauth/authorize): sign in, pick
 * knowledge bases, allow or deny, and the problems. Everything that came from a client (its name,
 * redirect host) or from a member (organization, tenant and knowledge-base names) is escaped.
 * No script; the pages cannot be framed.
 */

export const CONSENT_HEADERS: Record<string, string> = {
  ...PAGE_SECURITY_HEADERS,
  // Not no-referrer: under it a browser sends `Origin: null` with the page's own form POSTs, which the
  // POST handler refuses as cross-site. same-origin sends nothing to other sites.
  "Referrer-Policy": "same-origin",
  // No form-action: after Allow the browser follows a redirect to the client's own callback.
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-store",
};

const CSS = `${READABLE_CSS}
fieldset{border:1px solid var(--line);border-radius:6px;margin:0 0 16px;padding:8px 16px 12px}
legend{font-weight:600;padding:0 4px}
label{display:block;margin:6px 0}
input[type=email],input[type=password]{display:block;width:100%;max-width:360px;font:inherit;padding:6px 8px;margin-top:4px}
button{font:inherit;padding:6px 16px;margin-right:8px;cursor:pointer}
.alert{border:1px solid #cf222e;border-radius:6px;padding:8px 12px;color:#cf222e}
.muted{color:var(--muted)}
`;

const page = (title: string, body: string) => htmlDocument({ title, noindex: true, css: CSS, body: `<main>\n${body}\n</main>` });

const alert = (message: string | undefined) => (message ? `<p class="alert" role="alert">${e(message)}</p>` : "");

/** Who is asking and where the tokens go (the facts the MCP authorization guidance asks a consent page to show). */
function clientFacts(d: ConsentDescription): string {
  const origin = d.clientDomain
    ? `Published by <strong>${e(d.clientDomain)}</strong>.`
    : "This app registered itself; its name is not verified.";
  const loopback = d.redirectIsLoopback
    ? "<p><strong>This sends access to an app on your computer.</strong> Continue only if you just started connecting it.</p>"
    : "";
  return `<p>${origin} Access will be sent to <strong>${e(d.redirectHost)}</strong>.</p>\n${loopback}`;
}

function tenantFieldset(t: ConsentTenant): string {
  const boxes = t.knowledgeBases
    .map((kb) => `<label><input type="checkbox" name="knowledge_base_id" value="${e(kb.id)}"> ${e(kb.name)}${kb.status !== "active" ? " (inactive)" : ""}</label>`)
    .join("\n");
  return `<fieldset>\n<legend>${e(t.organizationName)} › ${e(t.environmentName)} › ${e(t.tenantName)}</legend>\n${boxes}\n</fieldset>`;
}

export interface ConsentView {
  details: ConsentDescription;
  handle: string;
  email: string;
  tenants: ConsentTenant[];
  truncated: boolean;
  error?: string;
}

export function consentPage(v: ConsentView): string {
  const name = e(v.details.clientName);
  const choices = v.tenants.length
    ? `<p>Pick the knowledge bases it may search and ask, all of one tenant:</p>\n${v.tenants.map(tenantFieldset).join("\n")}` +
      (v.truncated ? '\n<p class="muted">Only the first knowledge bases are listed.</p>' : "")
    : "<p>You have no knowledge bases to share: none of your organizations has one yet.</p>";
  const allow = v.tenants.length ? '<button type="submit" name="decision" value="approve">Allow</button>' : "";
  return page(
    `Authorize ${v.details.clientName}`,
    `<h1>Allow ${name} to read your knowledge bases?</h1>
${clientFacts(v.details)}
<p class="muted">Signed in as ${e(v.email)}.</p>
${alert(v.error)}
<form method="post">
<input type="hidden" name="handle" value="${e(v.handle)}">
${choices}
<p>It will search and ask them as you, until you revoke it (GET and DELETE /api/v1/mcp/oauth/grants) or leave the organization.</p>
<p>${allow}<button type="submit" name="decision" value="deny">Deny</button></p>
</form>`,
  );
}

export function signInPage(clientName: string, opts: { error?: string; email?: string } = {}): string {
  return page(
    `Sign in to authorize ${clientName}`,
    `<h1>Sign in to connect ${e(clientName)}</h1>
<p>Sign in with your account of this service; then pick the knowledge bases the app may read.</p>
${alert(opts.error)}
<form method="post">
<input type="hidden" name="intent" value="sign_in">
<label>Email <input type="email" name="email" autocomplete="username" required value="${e(opts.email ?? "")}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">No account? Ask an owner of your organization for an invitation.</p>`,
  );
}

export function problemPage(title: string, message: string): string {
  return page(title, `<h1>${e(title)}</h1>\n${alert(message)}\n<p>Start connecting again from the app.</p>`);
}

/**
 * The widget's settings, read once from its own <script> tag's data-* attributes:
 * data-token-url (required), data-api-base (default: where widget.js came from), data-title,
 * data-primary-color, data-position (right|left), data-model (default local-extractive),
 * data-agent-mode (quick|deep, default quick), data-welcome, data-placeholder, data-open ("true").
 */
export interface WidgetConfig {
  tokenUrl: string;
  /** The service's API root, e.g. https://kb.example.com/api/v1 */
  api: string;
  title: string;
  color: string;
  side: "left" | "right";
  model: string;
  agentMode: "quick" | "deep";
  welcome: string;
  placeholder: string;
  openOnLoad: boolean;
  /** Fallbacks when the token endpoint does not say which tenant and knowledge base. */
  tenantId?: string;
  knowledgeBaseId?: string;
}

function supportsColor(v: string): boolean {
  return !!(window.CSS && CSS.supports && CSS.supports("color", v));
}

/** The configuration, or null (with the reason in the console) when the tag cannot start a widget. */
export function readConfig(script: HTMLScriptElement): WidgetConfig | null {
  const ds = script.dataset;
  if (!ds.tokenUrl) {
    console.error("[kb-chat-widget] data-token-url is required");
    return null;
  }
  const apiRoot = String(ds.apiBase || new URL(script.src, location.href).origin).replace(/\/+$/, "");
  return {
    tokenUrl: ds.tokenUrl,
    api: apiRoot + "/api/v1",
    title: ds.title || "Ask a question",
    color: ds.primaryColor && supportsColor(ds.primaryColor) ? ds.primaryColor : "#2563eb",
    side: ds.position === "left" ? "left" : "right",
    model: ds.model || "local-extractive",
    agentMode: ds.agentMode === "deep" ? "deep" : "quick",
    welcome: ds.welcome || "Hi! Ask me anything — answers cite their sources.",
    placeholder: ds.placeholder || "Type your question…",
    openOnLoad: ds.open === "true",
    tenantId: ds.tenantId,
    knowledgeBaseId: ds.knowledgeBaseId,
  };
}

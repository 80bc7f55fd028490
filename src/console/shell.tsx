import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Component, useEffect, type ReactNode } from "react";
import { api, unwrap } from "./api/client";
import { Link, navigate, useLocation } from "./router";
import { ROLE_LABELS, type Me } from "./session";
import { Button } from "./ui/ui";

/**
 * The navigation of an organization. Groups grow in part 2 (agents, tools, memory, tables, skills,
 * artifacts, usage, embedding) by adding entries here and pages in app.tsx.
 */
const NAV: { group: string; items: { to: string; label: string }[] }[] = [
  { group: "Build", items: [{ to: "knowledge-bases", label: "Knowledge bases" }] },
  {
    group: "Agents and tools",
    items: [
      { to: "agents", label: "Agents" },
      { to: "mcp-servers", label: "MCP servers" },
      { to: "connectors", label: "Connected apps" },
      { to: "a2a-agents", label: "External agents" },
    ],
  },
  // Part 2, data and reach (memory, skills, embedding, usage): one block.
  {
    group: "Operate",
    items: [
      { to: "memory", label: "Memory" },
      { to: "skills", label: "Skills" },
      { to: "embedding", label: "Embedding" },
      { to: "usage", label: "Usage and billing" },
    ],
  },
  {
    group: "Organization",
    items: [
      { to: "members", label: "Members" },
      { to: "environments", label: "Environments" },
      { to: "api-keys", label: "API keys" },
      { to: "tenants", label: "Tenants and credits" },
      { to: "settings", label: "Settings" },
    ],
  },
];

function OrgSwitcher({ me, orgId }: { me: Me; orgId?: string }) {
  const { path } = useLocation();
  const section = /^\/o\/[^/]+\/([^/]+)/.exec(path)?.[1];
  const go = (id: string) => {
    if (id === "__new") return navigate("/organizations/new");
    // Same section in the other organization; a knowledge base's pages belong to one organization.
    navigate(`/o/${id}/${section && section !== "kb" ? section : "knowledge-bases"}`);
  };
  return (
    <div className="org-switcher">
      <label htmlFor="org-switcher">Organization</label>
      <select id="org-switcher" value={orgId ?? ""} onChange={(e) => go(e.target.value)}>
        {!orgId && <option value="">Choose…</option>}
        {me.organizations.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name} ({ROLE_LABELS[o.role]})
          </option>
        ))}
        <option value="__new">+ New organization…</option>
      </select>
    </div>
  );
}

/** A page that fails to render says so in words instead of leaving a blank screen. */
class PageBoundary extends Component<{ path: string; children: ReactNode }, { error: Error | null; path: string }> {
  state = { error: null as Error | null, path: this.props.path };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  static getDerivedStateFromProps(props: { path: string }, state: { error: Error | null; path: string }) {
    return props.path === state.path ? null : { error: null, path: props.path };
  }
  render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="note note-error" role="alert">
        This page could not be shown ({this.state.error.message}). Reload the page, or pick another page in the navigation.
      </div>
    );
  }
}

export function Shell({ me, orgId, children }: { me: Me; orgId?: string; children: ReactNode }) {
  const { path } = useLocation();
  const qc = useQueryClient();
  useEffect(() => {
    // A new page: move focus to it, as a full page load would (screen readers announce the new content).
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [path]);
  const signOut = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/auth/logout")),
    onSettled: () => {
      qc.clear();
      qc.setQueryData(["me"], null);
      navigate("/sign-in");
    },
  });
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          KB Console
        </Link>
        <OrgSwitcher me={me} orgId={orgId} />
        <div className="topbar-end">
          <Link to="/invitations">Invitations</Link>
          <a href="/swagger">API reference</a>
          <span className="muted user" title={me.user.email}>
            {me.user.name || me.user.email}
          </span>
          <Button onClick={() => signOut.mutate()} busy={signOut.isPending}>
            Sign out
          </Button>
        </div>
      </header>
      <div className="frame">
        {orgId && (
          <nav className="sidenav" aria-label="Console">
            {NAV.map((g) => (
              <div key={g.group}>
                <h2>{g.group}</h2>
                <ul>
                  {g.items.map((i) => {
                    const to = `/o/${orgId}/${i.to}`;
                    const current = path === to || path.startsWith(`${to}/`) || (i.to === "knowledge-bases" && path.startsWith(`/o/${orgId}/kb/`));
                    return (
                      <li key={i.to}>
                        <Link to={to} aria-current={current ? "page" : undefined}>
                          {i.label}
                        </Link>
                      </li>
                    );
                  })}
                </ul>
              </div>
            ))}
          </nav>
        )}
        <main id="main" tabIndex={-1}>
          <PageBoundary path={path}>{children}</PageBoundary>
        </main>
      </div>
    </div>
  );
}

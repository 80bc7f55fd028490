import { lazy, Suspense, useEffect, type ReactNode } from "react";
import { AuthPage } from "./pages/auth";
import { NewOrganization, OrganizationSettings, MyInvitations } from "./pages/organizations";
import { Members } from "./pages/members";
import { Environments } from "./pages/environments";
import { ApiKeys } from "./pages/api-keys";
import { Tenants } from "./pages/tenants";
import { KnowledgeBases } from "./pages/knowledge-bases";
import { KnowledgeBaseSettings } from "./pages/knowledge-base-settings";
import { Documents } from "./pages/documents/index";
import { Shell } from "./shell";
import { match, navigate, useLocation } from "./router";
import { useMe } from "./session";
import { ErrorNote, Loading } from "./ui/ui";

// The playground (streaming, citations) loads when first opened: the first page stays small.
const Playground = lazy(() => import("./pages/playground/playground"));
// Agents and tools (part 2): each loads when first opened.
const Agents = lazy(() => import("./pages/agents/index").then((m) => ({ default: m.Agents })));
const AgentDetail = lazy(() => import("./pages/agents/detail").then((m) => ({ default: m.AgentDetail })));
const McpServers = lazy(() => import("./pages/mcp/index").then((m) => ({ default: m.McpServers })));
const Connectors = lazy(() => import("./pages/connectors").then((m) => ({ default: m.Connectors })));
const A2aAgents = lazy(() => import("./pages/a2a-agents").then((m) => ({ default: m.A2aAgents })));
// Part 2, data and reach: each page is its own chunk (the chart and graph libraries load with their pages).
const Tables = lazy(() => import("./pages/data/tables"));
const Memory = lazy(() => import("./pages/data/memory"));
const Embedding = lazy(() => import("./pages/data/embedding"));
const Skills = lazy(() => import("./pages/data/skills"));
const Usage = lazy(() => import("./pages/data/usage"));
const Artifacts = lazy(() => import("./pages/data/artifacts"));

type Page = (p: Record<string, string>) => ReactNode;

/** Pages inside an organization: /o/:org/... (part 2 adds agents, tools, memory, tables, skills, artifacts, usage, embedding). */
const ORG_PAGES: [string, Page][] = [
  ["/o/:org/knowledge-bases", (p) => <KnowledgeBases orgId={p.org} />],
  ["/o/:org/kb/:kb", (p) => <Documents orgId={p.org} kbId={p.kb} />],
  ["/o/:org/kb/:kb/playground", (p) => <Playground orgId={p.org} kbId={p.kb} />],
  ["/o/:org/kb/:kb/settings", (p) => <KnowledgeBaseSettings orgId={p.org} kbId={p.kb} />],
  // Agents and tools
  ["/o/:org/agents", (p) => <Agents orgId={p.org} />],
  ["/o/:org/agents/:agent", (p) => <AgentDetail orgId={p.org} agentId={p.agent} />],
  ["/o/:org/mcp-servers", (p) => <McpServers orgId={p.org} />],
  ["/o/:org/connectors", (p) => <Connectors orgId={p.org} />],
  ["/o/:org/a2a-agents", (p) => <A2aAgents orgId={p.org} />],
  // Part 2, data and reach: one block.
  ["/o/:org/kb/:kb/tables", (p) => <Tables orgId={p.org} kbId={p.kb} />],
  ["/o/:org/kb/:kb/artifacts", (p) => <Artifacts orgId={p.org} kbId={p.kb} />],
  ["/o/:org/kb/:kb/artifacts/:artifact", (p) => <Artifacts orgId={p.org} kbId={p.kb} artifactId={p.artifact} />],
  ["/o/:org/memory", (p) => <Memory orgId={p.org} />],
  ["/o/:org/skills", (p) => <Skills orgId={p.org} />],
  ["/o/:org/embedding", (p) => <Embedding orgId={p.org} />],
  ["/o/:org/usage", (p) => <Usage orgId={p.org} />],
  ["/o/:org/members", (p) => <Members orgId={p.org} />],
  ["/o/:org/environments", (p) => <Environments orgId={p.org} />],
  ["/o/:org/api-keys", (p) => <ApiKeys orgId={p.org} />],
  ["/o/:org/tenants", (p) => <Tenants orgId={p.org} />],
  ["/o/:org/settings", (p) => <OrganizationSettings orgId={p.org} />],
];

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

export function App() {
  const { path } = useLocation();
  const me = useMe();
  if (path === "/sign-in" || path === "/sign-up") return <AuthPage mode={path === "/sign-in" ? "in" : "up"} signedIn={!!me.data} />;
  if (me.isLoading) return <Loading what="Opening the console" />;
  if (me.error) return <ErrorNote error={me.error} />;
  if (!me.data) return <Redirect to="/sign-in" />;
  const orgs = me.data.organizations;

  if (path === "/") return <Redirect to={orgs[0] ? `/o/${orgs[0].id}/knowledge-bases` : "/organizations/new"} />;
  if (path === "/organizations/new") return <Shell me={me.data}><NewOrganization /></Shell>;
  if (path === "/invitations") return <Shell me={me.data}><MyInvitations /></Shell>;
  const org = match("/o/:org", path);
  if (org) return <Redirect to={`/o/${org.org}/knowledge-bases`} />;
  for (const [pattern, render] of ORG_PAGES) {
    const params = match(pattern, path);
    if (!params) continue;
    const known = orgs.find((o) => o.id === params.org);
    return (
      <Shell me={me.data} orgId={params.org}>
        {known ? <Suspense key={path} fallback={<Loading />}>{render(params)}</Suspense> : <ErrorNote error={new Error("You are not a member of this organization, or it no longer exists.")} />}
      </Shell>
    );
  }
  return (
    <Shell me={me.data}>
      <h1>Page not found</h1>
      <p>There is nothing at this address. Pick a page in the navigation.</p>
    </Shell>
  );
}

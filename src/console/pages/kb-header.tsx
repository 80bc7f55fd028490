import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { Link, useLocation } from "../router";
import { Badge, ErrorNote, PageHeader } from "../ui/ui";

export function useKnowledgeBase(kbId: string) {
  return useQuery({ queryKey: ["knowledge-base", kbId], queryFn: () => unwrap(api.GET("/api/v1/knowledge-bases/{id}", { params: { path: { id: kbId } } })) });
}

/** A knowledge base's name and its pages: documents, playground, settings. */
export function KbHeader({ orgId, kbId, page }: { orgId: string; kbId: string; page: string }) {
  const kb = useKnowledgeBase(kbId);
  const { path } = useLocation();
  const base = `/o/${orgId}/kb/${kbId}`;
  const tabs = [
    { to: base, label: "Documents" },
    { to: `${base}/playground`, label: "Playground" },
    { to: `${base}/tables`, label: "Tables" },
    { to: `${base}/artifacts`, label: "Artifacts" },
    { to: `${base}/settings`, label: "Settings" },
  ];
  return (
    <>
      <p className="crumbs">
        <Link to={`/o/${orgId}/knowledge-bases`}>Knowledge bases</Link> /
      </p>
      <PageHeader title={kb.data ? `${kb.data.name} — ${page}` : page}>{kb.data?.status === "inactive" && <Badge tone="bad">inactive</Badge>}</PageHeader>
      <ErrorNote error={kb.error} />
      <nav className="tabs" aria-label="Knowledge base">
        {tabs.map((t) => (
          <Link key={t.to} to={t.to} aria-current={path === t.to ? "page" : undefined}>
            {t.label}
          </Link>
        ))}
      </nav>
    </>
  );
}

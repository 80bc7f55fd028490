import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../api/client";
import { Link, navigate } from "../router";
import { useScope } from "../session";
import { Badge, Button, Empty, ErrorNote, Field, Loading, PageHeader, Select, TextArea } from "../ui/ui";

export function useKnowledgeBases(tenantId: string | undefined) {
  return useQuery({
    queryKey: ["knowledge-bases", tenantId],
    enabled: !!tenantId,
    queryFn: () => unwrap(api.GET("/api/v1/knowledge-bases", { params: { query: { tenant_id: tenantId!, limit: 100 } } })),
  });
}

export function ScopeBar({ scope }: { scope: ReturnType<typeof useScope> }) {
  return (
    <div className="scope-bar">
      <Select label="Environment" value={scope.envId ?? ""} options={scope.envs.map((e) => ({ value: e.id, label: e.name }))} onChange={(e) => scope.setEnv(e.target.value)} />
      <Select label="Tenant" value={scope.tenantId ?? ""} options={scope.tenants.map((t) => ({ value: t.id, label: t.name }))} onChange={(e) => scope.setTenant(e.target.value)} />
    </div>
  );
}

/** The knowledge bases of the chosen tenant, and a form to create one. */
export function KnowledgeBases({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const scope = useScope(orgId);
  const kbs = useKnowledgeBases(scope.tenantId);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/knowledge-bases", { body: { tenant_id: scope.tenantId!, name, description: description || null } })),
    onSuccess: (kb) => {
      void qc.invalidateQueries({ queryKey: ["knowledge-bases", scope.tenantId] });
      navigate(`/o/${orgId}/kb/${kb.id}`);
    },
  });
  const list = kbs.data?.knowledge_bases ?? [];
  return (
    <>
      <PageHeader title="Knowledge bases" />
      <ScopeBar scope={scope} />
      <ErrorNote error={scope.error ?? kbs.error} />
      {(scope.loading || kbs.isLoading) && <Loading />}
      {kbs.data && !list.length && (
        <Empty title="No knowledge bases in this tenant yet.">
          <p>Create one below, then upload documents to it and ask questions in its playground.</p>
        </Empty>
      )}
      {list.length > 0 && (
        <ul className="cards grid">
          {list.map((kb) => (
            <li key={kb.id} className="card">
              <h2>
                <Link to={`/o/${orgId}/kb/${kb.id}`}>{kb.name}</Link>
              </h2>
              {kb.status === "inactive" && <Badge tone="bad">inactive</Badge>}
              <p className="muted">{kb.description || "No description."}</p>
              <p className="row">
                <Link to={`/o/${orgId}/kb/${kb.id}`}>Documents</Link>
                <Link to={`/o/${orgId}/kb/${kb.id}/playground`}>Playground</Link>
                <Link to={`/o/${orgId}/kb/${kb.id}/settings`}>Settings</Link>
              </p>
            </li>
          ))}
        </ul>
      )}
      <form className="card form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
        <h2>New knowledge base</h2>
        <Field label="Knowledge base name" required value={name} onChange={(e) => setName(e.target.value)} />
        <TextArea label="Description (optional)" rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
        <ErrorNote error={create.error} />
        <Button type="submit" variant="primary" busy={create.isPending} disabled={!scope.tenantId}>
          Create knowledge base
        </Button>
      </form>
    </>
  );
}

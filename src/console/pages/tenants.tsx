import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { useScope } from "../session";
import { Badge, Button, confirmed, Dialog, ErrorNote, Field, Loading, PageHeader, Select, formatBytes } from "../ui/ui";

type Tenant = Schemas["Tenant"];

function Quotas({ tenant, onDone }: { tenant: Tenant; onDone: () => void }) {
  const [f, setF] = useState({
    name: tenant.name,
    external_id: tenant.external_id ?? "",
    max_knowledge_bases: String(tenant.max_knowledge_bases),
    max_documents: String(tenant.max_documents),
    max_storage_gb: String(tenant.max_storage_gb),
  });
  const save = useMutation({
    mutationFn: () =>
      unwrap(
        api.PATCH("/api/v1/tenants/{id}", {
          params: { path: { id: tenant.id } },
          body: {
            name: f.name,
            external_id: f.external_id || null,
            max_knowledge_bases: Number(f.max_knowledge_bases),
            max_documents: Number(f.max_documents),
            max_storage_gb: Number(f.max_storage_gb),
          },
        }),
      ),
    onSuccess: onDone,
  });
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  return (
    <form className="form" onSubmit={(e) => (e.preventDefault(), save.mutate())}>
      <Field label="Name" required value={f.name} onChange={set("name")} />
      <Field label="External id (your system's id for this customer)" value={f.external_id} onChange={set("external_id")} />
      <Field label="Knowledge bases at most" type="number" min={0} value={f.max_knowledge_bases} onChange={set("max_knowledge_bases")} />
      <Field label="Documents at most" type="number" min={0} value={f.max_documents} onChange={set("max_documents")} />
      <Field label="Storage at most (GB)" type="number" min={0} step="0.1" value={f.max_storage_gb} onChange={set("max_storage_gb")} />
      <ErrorNote error={save.error} />
      <Button type="submit" variant="primary" busy={save.isPending}>Save</Button>
    </form>
  );
}

function AddCredits({ tenant, onDone }: { tenant: Tenant; onDone: () => void }) {
  const [amount, setAmount] = useState("");
  const add = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/billing/tenants/{tenantId}/credits", { params: { path: { tenantId: tenant.id } }, body: { amount: Number(amount) } })),
    onSuccess: onDone,
  });
  return (
    <form className="form" onSubmit={(e) => (e.preventDefault(), add.mutate())}>
      <p>Moves credits from the organization's available credits into this tenant's pool ({tenant.credits_available} available now).</p>
      <Field label="Credits to move" type="number" min={1} max={1000000} required value={amount} onChange={(e) => setAmount(e.target.value)} />
      <ErrorNote error={add.error} />
      <Button type="submit" variant="primary" busy={add.isPending}>Move credits</Button>
    </form>
  );
}

/** Tenants (your customers) of an environment, with their credits, quotas and usage. */
export function Tenants({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const scope = useScope(orgId);
  const refresh = () => void qc.invalidateQueries({ queryKey: ["tenants", scope.envId] });
  const [name, setName] = useState("");
  const [editing, setEditing] = useState<{ tenant: Tenant; what: "quotas" | "credits" } | null>(null);
  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/tenants", { body: { environment_id: scope.envId!, name } })),
    onSuccess: () => (setName(""), refresh()),
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE("/api/v1/tenants/{id}", { params: { path: { id } } })),
    onSuccess: refresh,
  });
  return (
    <>
      <PageHeader title="Tenants and credits" />
      <p>A tenant is one of your customers: its knowledge bases, documents and chats are kept apart, and it spends its own pool of credits.</p>
      <div className="scope-bar"><Select label="Environment" value={scope.envId ?? ""} options={scope.envs.map((e) => ({ value: e.id, label: e.name }))} onChange={(e) => scope.setEnv(e.target.value)} /></div>
      <form className="card inline-form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
        <Field label="New tenant" placeholder="Acme Ltd" required value={name} onChange={(e) => setName(e.target.value)} />
        <Button type="submit" variant="primary" busy={create.isPending} disabled={!scope.envId}>Create tenant</Button>
      </form>
      <ErrorNote error={create.error ?? scope.error ?? remove.error} />
      {scope.loading && <Loading />}
      <div className="table-wrap"><table className="table">
        <thead>
          <tr>
            <th scope="col">Tenant</th><th scope="col">Credits (available / pool)</th><th scope="col">Knowledge bases</th><th scope="col">Documents</th><th scope="col">Storage</th><th scope="col"><span className="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {scope.tenants.map((t) => (
            <tr key={t.id}>
              <td>{t.name} {t.is_default && <Badge>default</Badge>}<br /><code className="muted">{t.id}</code></td>
              <td>{t.credits_available} / {t.credits_pool}</td>
              <td>{t.knowledge_base_count} of {t.max_knowledge_bases}</td>
              <td>{t.document_count} of {t.max_documents}</td>
              <td>{formatBytes(t.storage_used_bytes)} of {t.max_storage_gb} GB</td>
              <td className="actions">
                <Button onClick={() => setEditing({ tenant: t, what: "credits" })}>Add credits</Button>
                <Button onClick={() => setEditing({ tenant: t, what: "quotas" })}>Edit</Button>
                <Button variant="ghost" onClick={() => confirmed(`Delete ${t.name} with all its knowledge bases, documents and chats?`) && remove.mutate(t.id)}>Delete</Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table></div>
      <Dialog open={!!editing} title={editing ? `${editing.what === "credits" ? "Add credits to" : "Edit"} ${editing.tenant.name}` : ""} onClose={() => setEditing(null)}>
        {editing?.what === "quotas" && <Quotas tenant={editing.tenant} onDone={() => (setEditing(null), refresh())} />}
        {editing?.what === "credits" && <AddCredits tenant={editing.tenant} onDone={() => (setEditing(null), refresh())} />}
      </Dialog>
    </>
  );
}

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Badge, Button, confirmed, Dialog, Empty, ErrorNote, Field, Loading, PageHeader, TextArea } from "../../ui/ui";
import { ScopeBar } from "../knowledge-bases";

type Skill = Schemas["Skill"];
type Form = { name: string; description: string; body: string };

function SkillForm({ tenantId, skill, onDone }: { tenantId: string; skill: Skill | null; onDone: () => void }) {
  const [f, setF] = useState<Form>({ name: skill?.name ?? "", description: skill?.description ?? "", body: skill?.body ?? "" });
  const save = useMutation({
    mutationFn: () =>
      skill
        ? unwrap(api.PATCH("/api/v1/skills/{id}", { params: { path: { id: skill.id }, query: { tenant_id: tenantId } }, body: f }))
        : unwrap(api.POST("/api/v1/skills", { body: { tenant_id: tenantId, ...f } })),
    onSuccess: onDone,
  });
  const set = (k: keyof Form) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  return (
    <form className="form" onSubmit={(e) => (e.preventDefault(), save.mutate())}>
      <Field label="Name" required value={f.name} onChange={set("name")} />
      <TextArea label="Description" hint="What an agent reads to decide whether the skill applies." rows={2} required value={f.description} onChange={set("description")} />
      <TextArea label="Instructions (Markdown)" rows={10} required value={f.body} onChange={set("body")} />
      <ErrorNote error={save.error} />
      <Button type="submit" variant="primary" busy={save.isPending}>{skill ? "Save" : "Create skill"}</Button>
    </form>
  );
}

function Catalog({ tenantId, refresh }: { tenantId: string; refresh: () => void }) {
  const catalog = useQuery({ queryKey: ["skill-catalog", tenantId], queryFn: () => unwrap(api.GET("/api/v1/skills/catalog", { params: { query: { tenant_id: tenantId } } })) });
  const install = useMutation({
    mutationFn: (id: string) => unwrap(api.POST("/api/v1/skills/catalog/{id}/install", { params: { path: { id } }, body: { tenant_id: tenantId } })),
    onSuccess: () => (refresh(), void catalog.refetch()),
  });
  const favorite = useMutation({
    mutationFn: ({ id, on }: { id: string; on: boolean }) =>
      on
        ? unwrap(api.POST("/api/v1/skills/catalog/{id}/favorite", { params: { path: { id } }, body: { tenant_id: tenantId } }))
        : unwrap(api.DELETE("/api/v1/skills/catalog/{id}/favorite", { params: { path: { id }, query: { tenant_id: tenantId } } })),
    onSuccess: () => void catalog.refetch(),
  });
  return (
    <section aria-labelledby="catalog-heading">
      <h2 id="catalog-heading">Catalog</h2>
      <ErrorNote error={catalog.error ?? install.error ?? favorite.error} />
      {catalog.isLoading && <Loading />}
      <ul className="cards grid">
        {(catalog.data?.templates ?? []).map((t) => (
          <li key={t.id} className="card">
            <h3>{t.name} <Badge>{t.category}</Badge> <span className="muted small">v{t.version}</span></h3>
            <p className="muted">{t.description}</p>
            <div className="row">
              {t.installed_skill_id ? <Badge tone="good">installed</Badge> : <Button variant="primary" busy={install.isPending && install.variables === t.id} onClick={() => install.mutate(t.id)} aria-label={`Install ${t.name}`}>Install</Button>}
              <Button variant="ghost" aria-pressed={t.is_favorite} onClick={() => favorite.mutate({ id: t.id, on: !t.is_favorite })} aria-label={`${t.is_favorite ? "Unfavorite" : "Favorite"} ${t.name}`}>{t.is_favorite ? "★ Favorite" : "☆ Favorite"}</Button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Skills: the tenant's own (written here or installed from the catalog, editable) and the catalog. */
export default function Skills({ orgId }: { orgId: string }) {
  const scope = useScope(orgId);
  const qc = useQueryClient();
  const tenantId = scope.tenantId;
  const skills = useQuery({ queryKey: ["skills", tenantId], enabled: !!tenantId, queryFn: () => unwrap(api.GET("/api/v1/skills", { params: { query: { tenant_id: tenantId!, limit: 500 } } })) });
  const [editing, setEditing] = useState<Skill | "new" | null>(null);
  const refresh = () => void qc.invalidateQueries({ queryKey: ["skills", tenantId] });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE("/api/v1/skills/{id}", { params: { path: { id }, query: { tenant_id: tenantId! } } })),
    onSuccess: () => (refresh(), void qc.invalidateQueries({ queryKey: ["skill-catalog", tenantId] })),
  });
  const list = skills.data?.skills ?? [];
  return (
    <>
      <PageHeader title="Skills"><Button variant="primary" disabled={!tenantId} onClick={() => setEditing("new")}>New skill</Button></PageHeader>
      <p>Instructions the assistant and agents follow when a task calls for them. Write your own, or install a template from the catalog as an editable copy.</p>
      <ScopeBar scope={scope} />
      <ErrorNote error={scope.error ?? skills.error ?? remove.error} />
      <h2>Your skills</h2>
      {skills.isLoading && <Loading />}
      {skills.data && !list.length && <Empty title="No skills yet."><p>Create one, or install one from the catalog below.</p></Empty>}
      {list.length > 0 && (
        <ul className="cards grid">
          {list.map((s) => (
            <li key={s.id} className="card">
              <h3>{s.name} {s.template_id && <Badge>from the catalog, v{s.template_version}</Badge>}</h3>
              <p className="muted">{s.description}</p>
              <div className="row">
                <Button onClick={() => setEditing(s)} aria-label={`Edit ${s.name}`}>Edit</Button>
                <Button variant="ghost" onClick={() => confirmed(`Remove the skill ${s.name}?`) && remove.mutate(s.id)} aria-label={`Remove ${s.name}`}>Remove</Button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {tenantId && <Catalog tenantId={tenantId} refresh={refresh} />}
      <Dialog open={!!editing} title={editing === "new" ? "New skill" : editing ? `Edit ${editing.name}` : ""} onClose={() => setEditing(null)}>
        {editing && tenantId && <SkillForm tenantId={tenantId} skill={editing === "new" ? null : editing} onDone={() => (setEditing(null), refresh())} />}
      </Dialog>
    </>
  );
}

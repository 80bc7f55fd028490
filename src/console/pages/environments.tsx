import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { useEnvironments } from "../session";
import { Badge, Button, confirmed, ErrorNote, Field, Loading, PageHeader, formatDate } from "../ui/ui";

function EnvironmentRow({ env, onChanged }: { env: Schemas["Environment"]; onChanged: () => void }) {
  const [name, setName] = useState<string | null>(null);
  const rename = useMutation({
    mutationFn: () => unwrap(api.PATCH("/api/v1/environments/{id}", { params: { path: { id: env.id } }, body: { name: name! } })),
    onSuccess: () => (setName(null), onChanged()),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/v1/environments/{id}", { params: { path: { id: env.id } } })),
    onSuccess: onChanged,
  });
  return (
    <li className="card">
      <form className="inline-form" onSubmit={(e) => (e.preventDefault(), rename.mutate())}>
        <Field label={`Name of ${env.name}`} value={name ?? env.name} onChange={(e) => setName(e.target.value)} />
        <Button type="submit" disabled={name === null || name === env.name} busy={rename.isPending}>Rename</Button>
        {!env.is_default && (
          <Button variant="ghost" busy={remove.isPending} onClick={() => confirmed(`Delete the environment ${env.name}, its tenants, knowledge bases and keys?`) && remove.mutate()}>
            Delete
          </Button>
        )}
      </form>
      <p className="muted">
        {env.is_default && <Badge>default</Badge>} <code>{env.id}</code> · created {formatDate(env.created_at)}
      </p>
      <ErrorNote error={rename.error ?? remove.error} />
    </li>
  );
}

/** Environments separate keys and tenants (e.g. production and staging). */
export function Environments({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const envs = useEnvironments(orgId);
  const refresh = () => void qc.invalidateQueries({ queryKey: ["environments", orgId] });
  const [name, setName] = useState("");
  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/organizations/{id}/environments", { params: { path: { id: orgId } }, body: { name } })),
    onSuccess: () => (setName(""), refresh()),
  });
  return (
    <>
      <PageHeader title="Environments" />
      <p>Each environment has its own API keys and tenants, so production and staging never mix.</p>
      <form className="card inline-form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
        <Field label="New environment" placeholder="staging" required value={name} onChange={(e) => setName(e.target.value)} />
        <Button type="submit" variant="primary" busy={create.isPending}>Create environment</Button>
      </form>
      <ErrorNote error={create.error ?? envs.error} />
      {envs.isLoading && <Loading />}
      <ul className="cards">
        {envs.data?.environments.map((e) => <EnvironmentRow key={e.id} env={e} onChanged={refresh} />)}
      </ul>
    </>
  );
}

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { api, unwrap } from "../api/client";
import { Link, navigate } from "../router";
import { ROLE_LABELS, useMe } from "../session";
import { Button, confirmed, Empty, ErrorNote, Field, Loading, Notice, PageHeader, formatDate } from "../ui/ui";

const slugify = (s: string) =>
  s
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63);

export function NewOrganization() {
  const qc = useQueryClient();
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [slugTouched, setSlugTouched] = useState(false);
  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/organizations", { body: { name, slug: slugTouched ? slug : slugify(name) } })),
    onSuccess: async (org) => {
      await qc.invalidateQueries({ queryKey: ["me"] });
      navigate(`/o/${org.id}/knowledge-bases`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const invitations = useQuery({ queryKey: ["my-invitations"], queryFn: () => unwrap(api.GET("/api/v1/invitations")) });
  const pending = invitations.data?.invitations.filter((i) => i.status === "pending").length ?? 0;
  return (
    <>
      <PageHeader title="New organization" />
      {pending > 0 && (
        <Notice>
          You have been invited to {pending === 1 ? "an organization" : `${pending} organizations`}: <Link to="/invitations">see your invitations</Link> to join instead.
        </Notice>
      )}
      <p>An organization holds your environments, tenants, knowledge bases, members and credits. It starts with a default environment and tenant.</p>
      <form className="card form" onSubmit={submit}>
        <Field label="Name" required value={name} onChange={(e) => setName(e.target.value)} />
        <Field
          label="Slug"
          hint="Lowercase letters, digits and hyphens; used in addresses."
          value={slugTouched ? slug : slugify(name)}
          onChange={(e) => {
            setSlugTouched(true);
            setSlug(e.target.value);
          }}
        />
        <ErrorNote error={create.error} />
        <Button type="submit" variant="primary" busy={create.isPending}>
          Create organization
        </Button>
      </form>
    </>
  );
}

/** Invitations addressed to the signed-in user's email, to accept. */
export function MyInvitations() {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: ["my-invitations"], queryFn: () => unwrap(api.GET("/api/v1/invitations")) });
  const accept = useMutation({
    mutationFn: (id: string) => unwrap(api.POST("/api/v1/invitations/{id}/accept", { params: { path: { id } } })),
    onSuccess: async (r) => {
      await qc.invalidateQueries({ queryKey: ["me"] });
      await qc.invalidateQueries({ queryKey: ["my-invitations"] });
      navigate(`/o/${r.organization.id}/knowledge-bases`);
    },
  });
  const pending = list.data?.invitations.filter((i) => i.status === "pending") ?? [];
  return (
    <>
      <PageHeader title="Invitations" />
      {list.isLoading && <Loading />}
      <ErrorNote error={list.error ?? accept.error} />
      {list.data && !pending.length && (
        <Empty title="No invitations for you.">
          <p>When an owner invites your email to an organization, it appears here. You can also create your own organization from the switcher above.</p>
        </Empty>
      )}
      {pending.length > 0 && (
        <ul className="cards">
          {pending.map((i) => (
            <li key={i.id} className="card row">
              <div>
                <strong>{i.organization_name ?? i.organization_id}</strong>
                <p className="muted">
                  As {ROLE_LABELS[i.role]} · expires {formatDate(i.expires_at)}
                </p>
              </div>
              <Button variant="primary" onClick={() => accept.mutate(i.id)} busy={accept.isPending && accept.variables === i.id}>
                Accept
              </Button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Credits({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const billing = useQuery({ queryKey: ["org-billing", orgId], queryFn: () => unwrap(api.GET("/api/v1/billing/organizations/{orgId}", { params: { path: { orgId } } })) });
  const [amount, setAmount] = useState("");
  const add = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/billing/organizations/{orgId}/credits", { params: { path: { orgId } }, body: { amount: Number(amount) } })),
    onSuccess: (b) => {
      qc.setQueryData(["org-billing", orgId], b);
      setAmount("");
    },
  });
  const b = billing.data;
  return (
    <section className="card">
      <h2>Credits</h2>
      {billing.isLoading && <Loading />}
      <ErrorNote error={billing.error} />
      {b && (
        <dl className="stats">
          <div><dt>Total this period</dt><dd>{b.total_credits}</dd></div>
          <div><dt>Allocated to tenants</dt><dd>{b.allocated_credits}</dd></div>
          <div><dt>Used</dt><dd>{b.used_credits}</dd></div>
          <div><dt>Available</dt><dd>{b.available_credits}</dd></div>
        </dl>
      )}
      <form className="inline-form" onSubmit={(e) => (e.preventDefault(), add.mutate())}>
        <Field label="Add credits to the organization" type="number" min={1} max={1000000} required value={amount} onChange={(e) => setAmount(e.target.value)} />
        <Button type="submit" busy={add.isPending}>Add credits</Button>
      </form>
      <ErrorNote error={add.error} />
      <p className="muted">Move credits into a tenant's pool on the Tenants page.</p>
    </section>
  );
}

export function OrganizationSettings({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const me = useMe();
  const org = useQuery({ queryKey: ["org", orgId], queryFn: () => unwrap(api.GET("/api/v1/organizations/{id}", { params: { path: { id: orgId } } })) });
  const [name, setName] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: () => unwrap(api.PATCH("/api/v1/organizations/{id}", { params: { path: { id: orgId } }, body: { name: name ?? undefined } })),
    onSuccess: async (o) => {
      qc.setQueryData(["org", orgId], o);
      setName(null);
      await qc.invalidateQueries({ queryKey: ["me"] });
    },
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/v1/organizations/{id}", { params: { path: { id: orgId } } })),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ["me"] });
      navigate("/");
    },
  });
  const role = me.data?.organizations.find((o) => o.id === orgId)?.role;
  return (
    <>
      <PageHeader title="Organization settings" />
      {org.isLoading && <Loading />}
      <ErrorNote error={org.error} />
      {org.data && (
        <section className="card">
          <h2>Profile</h2>
          <form className="inline-form" onSubmit={(e) => (e.preventDefault(), save.mutate())}>
            <Field label="Name" required value={name ?? org.data.name} onChange={(e) => setName(e.target.value)} />
            <Button type="submit" disabled={name === null} busy={save.isPending}>Save</Button>
          </form>
          <ErrorNote error={save.error} />
          {save.isSuccess && <Notice>Saved.</Notice>}
          <p className="muted">
            Slug <code>{org.data.slug}</code> · {org.data.type} · {org.data.status} · your role: {role ? ROLE_LABELS[role] : "—"}
          </p>
        </section>
      )}
      <Credits orgId={orgId} />
      <section className="card danger-zone">
        <h2>Delete the organization</h2>
        <p>Removes everything in it: environments, tenants, knowledge bases, documents, chats and keys. This cannot be undone. Only an owner can do it.</p>
        <Button variant="danger" busy={remove.isPending} onClick={() => confirmed(`Delete ${org.data?.name ?? "this organization"} and everything in it?`) && remove.mutate()}>
          Delete organization
        </Button>
        <ErrorNote error={remove.error} />
      </section>
    </>
  );
}

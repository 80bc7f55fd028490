import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { ROLE_LABELS, useMe, type Role } from "../session";
import { Badge, Button, confirmed, Empty, ErrorNote, Field, Loading, Notice, PageHeader, Select, formatDate } from "../ui/ui";

const INVITE_ROLES = (["viewer", "developer", "billing_admin"] as const).map((r) => ({ value: r, label: ROLE_LABELS[r] }));
const ALL_ROLES = (["owner", "billing_admin", "developer", "viewer"] as const).map((r) => ({ value: r, label: ROLE_LABELS[r] }));

function InviteForm({ orgId, onInvited }: { orgId: string; onInvited: () => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"viewer" | "developer" | "billing_admin">("viewer");
  const invite = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/organizations/{id}/members", { params: { path: { id: orgId } }, body: { email, role } })),
    onSuccess: () => (setEmail(""), onInvited()),
  });
  return (
    <section className="card">
      <h2>Invite someone</h2>
      <form className="inline-form" onSubmit={(e) => (e.preventDefault(), invite.mutate())}>
        <Field label="Email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <Select label="Role" value={role} options={INVITE_ROLES} onChange={(e) => setRole(e.target.value as typeof role)} />
        <Button type="submit" variant="primary" busy={invite.isPending}>Send invitation</Button>
      </form>
      <ErrorNote error={invite.error} />
      {invite.isSuccess && <Notice>Invitation created for {invite.data.email}. They accept it under Invitations after signing in with that email.</Notice>}
      <p className="muted">Viewers read; developers build knowledge bases and keys; billing admins also manage tenants and credits; owners manage members.</p>
    </section>
  );
}

function People({ orgId, members, onChanged }: { orgId: string; members: Schemas["Member"][]; onChanged: () => void }) {
  const me = useMe();
  const changeRole = useMutation({
    mutationFn: (v: { user_id: string; role: Role }) => unwrap(api.POST("/api/v1/organizations/{id}/members/role", { params: { path: { id: orgId } }, body: v })),
    onSettled: onChanged,
  });
  const remove = useMutation({
    mutationFn: (member_id: string) => unwrap(api.DELETE("/api/v1/organizations/{id}/members/{member_id}", { params: { path: { id: orgId, member_id } } })),
    onSuccess: onChanged,
  });
  return (
    <>
      <h2>People</h2>
      <ErrorNote error={changeRole.error ?? remove.error} />
      <div className="table-wrap"><table className="table">
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.member_id}>
              <td>{m.name ?? "—"}{m.user_id === me.data?.user.id && <> <Badge>you</Badge></>}</td>
              <td>{m.email}</td>
              <td>
                <label className="sr-only" htmlFor={`role-${m.member_id}`}>Role of {m.email}</label>
                <select id={`role-${m.member_id}`} value={m.role} onChange={(e) => changeRole.mutate({ user_id: m.user_id, role: e.target.value as Role })}>
                  {ALL_ROLES.map((r) => <option key={r.value} value={r.value}>{r.label}</option>)}
                </select>
              </td>
              <td>{formatDate(m.joined_at)}</td>
              <td>
                <Button variant="ghost" onClick={() => confirmed(`Remove ${m.email} from the organization? Their access ends at once.`) && remove.mutate(m.member_id)}>
                  Remove
                </Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table></div>
    </>
  );
}

function Invitations({ orgId, invitations, onChanged }: { orgId: string; invitations: Schemas["Invitation"][]; onChanged: () => void }) {
  const cancel = useMutation({
    mutationFn: (invite_id: string) => unwrap(api.DELETE("/api/v1/organizations/{id}/invites/{invite_id}", { params: { path: { id: orgId, invite_id } } })),
    onSuccess: onChanged,
  });
  const pending = invitations.filter((i) => i.status === "pending");
  return (
    <>
      <h2>Pending invitations</h2>
      <ErrorNote error={cancel.error} />
      {pending.length === 0 ? (
        <Empty title="No pending invitations.">
          <p>Invite a colleague by email above.</p>
        </Empty>
      ) : (
        <div className="table-wrap"><table className="table">
          <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {pending.map((i) => (
              <tr key={i.id}>
                <td>{i.email}</td>
                <td>{ROLE_LABELS[i.role]}</td>
                <td>{formatDate(i.expires_at)}</td>
                <td><Button variant="ghost" onClick={() => cancel.mutate(i.id)}>Cancel</Button></td>
              </tr>
            ))}
          </tbody>
        </table></div>
      )}
    </>
  );
}

/** Members and invitations with their roles. Only owners may change them; the API says so in words otherwise. */
export function Members({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const key = ["members", orgId];
  const list = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET("/api/v1/organizations/{id}/members", { params: { path: { id: orgId } } })) });
  const refresh = () => void qc.invalidateQueries({ queryKey: key });
  return (
    <>
      <PageHeader title="Members" />
      <InviteForm orgId={orgId} onInvited={refresh} />
      {list.isLoading && <Loading />}
      <ErrorNote error={list.error} />
      {list.data && (
        <section>
          <People orgId={orgId} members={list.data.members} onChanged={refresh} />
          <Invitations orgId={orgId} invitations={list.data.invitations} onChanged={refresh} />
        </section>
      )}
    </>
  );
}

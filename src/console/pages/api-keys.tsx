import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import type { paths } from "../api/schema";
import { useScope } from "../session";
import { useKnowledgeBases } from "./knowledge-bases";
import { Badge, Button, confirmed, CopyButton, Dialog, Empty, ErrorNote, Field, Loading, PageHeader, Select, formatDate } from "../ui/ui";

type CreateBody = paths["/api/v1/environments/{id}/api-keys"]["post"]["requestBody"]["content"]["application/json"];
type Scope = CreateBody["scopes"][number];

const SCOPES: { scope: Scope; what: string }[] = [
  { scope: "query:rag", what: "Chat and query knowledge bases" },
  { scope: "documents:read", what: "List and download documents" },
  { scope: "documents:write", what: "Upload and reprocess documents" },
  { scope: "documents:delete", what: "Delete documents" },
  { scope: "tenants:read", what: "Read tenants and their usage" },
  { scope: "tenants:write", what: "Create and change tenants" },
  { scope: "tenants:delete", what: "Delete tenants" },
  { scope: "skills:read", what: "Read skills" },
  { scope: "skills:write", what: "Write skills" },
  { scope: "artifacts:read", what: "Read artifacts" },
  { scope: "artifacts:write", what: "Write artifacts" },
  { scope: "connectors:read", what: "Read connected apps" },
  { scope: "connectors:write", what: "Connect apps" },
  { scope: "connectors:delete", what: "Disconnect apps" },
  { scope: "agents:read", what: "Read agents" },
  { scope: "agents:write", what: "Create and run agents" },
  { scope: "admin:full", what: "Everything in the environment" },
];

function CreateKey({ envId, tenants, kbs, onCreated }: { envId: string; tenants: { id: string; name: string }[]; kbs: { id: string; name: string }[]; onCreated: (secret: { key: string; name: string }) => void }) {
  const [tenantIds, setTenantIds] = useState<string[]>([]);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["query:rag", "documents:read"]);
  const [kbId, setKbId] = useState("");
  const [expires, setExpires] = useState("");
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/v1/environments/{id}/api-keys", {
          params: { path: { id: envId } },
          body: { name, scopes, tenant_ids: tenantIds, knowledge_base_id: kbId || undefined, expires_at: expires ? new Date(expires).toISOString() : undefined },
        }),
      ),
    onSuccess: (k) => {
      onCreated({ key: (k as { key: string }).key, name });
      setName("");
      // The secret lives in the dialog only, not in the mutation's cached result.
      create.reset();
    },
  });
  const toggle = (s: Scope) => setScopes((cur) => (cur.includes(s) ? cur.filter((x) => x !== s) : [...cur, s]));
  return (
    <form className="card form" onSubmit={(e) => (e.preventDefault(), create.mutate())}>
      <h2>Create a key</h2>
      <Field label="Key name" placeholder="shop backend" required value={name} onChange={(e) => setName(e.target.value)} />
      <fieldset className="scopes">
        <legend>Scopes</legend>
        {SCOPES.map(({ scope, what }) => (
          <label key={scope} className="check">
            <input type="checkbox" checked={scopes.includes(scope)} onChange={() => toggle(scope)} />
            <code>{scope}</code> <span className="muted">{what}</span>
          </label>
        ))}
      </fieldset>
      {tenants.length > 1 && (
        <fieldset className="scopes">
          <legend>Tenants (none ticked: every tenant of the environment)</legend>
          {tenants.map((t) => (
            <label key={t.id} className="check">
              <input type="checkbox" checked={tenantIds.includes(t.id)} onChange={() => setTenantIds((c) => (c.includes(t.id) ? c.filter((x) => x !== t.id) : [...c, t.id]))} />
              {t.name}
            </label>
          ))}
        </fieldset>
      )}
      <Select
        label="Knowledge bases"
        value={kbId}
        onChange={(e) => setKbId(e.target.value)}
        options={[{ value: "", label: "All it may reach" }, ...kbs.map((k) => ({ value: k.id, label: `Only ${k.name}` }))]}
        hint="A key limited to one knowledge base suits a single app or an embed backend."
      />
      <Field label="Expires (optional)" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
      <ErrorNote error={create.error} />
      <Button type="submit" variant="primary" busy={create.isPending} disabled={!scopes.length}>
        Create key
      </Button>
    </form>
  );
}

function SecretDialog({ secret, onClose }: { secret: { key: string; name: string } | null; onClose: () => void }) {
  return (
    <Dialog open={!!secret} title={`Your new key: ${secret?.name ?? ""}`} onClose={onClose}>
      <p>Copy it now: this is the only time it is shown. Store it as a secret on your server.</p>
      <p className="secret">
        <code data-testid="new-key">{secret?.key}</code>
      </p>
      <div className="row">
        <CopyButton text={secret?.key ?? ""} label="Copy key" />
        <Button variant="primary" onClick={onClose}>I have stored it</Button>
      </div>
    </Dialog>
  );
}

function KeysTable({ keys, onRevoked }: { keys: Schemas["ApiKey"][]; onRevoked: () => void }) {
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE("/api/v1/api-keys/{id}", { params: { path: { id } } })),
    onSuccess: onRevoked,
  });
  return (
    <>
      <ErrorNote error={revoke.error} />
      <div className="table-wrap"><table className="table">
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span className="sr-only">Actions</span></th></tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id}>
              <td>{k.name}{k.knowledge_base_id && <> <Badge>one knowledge base</Badge></>}</td>
              <td><code>{k.prefix}…</code></td>
              <td className="wrap">{k.scopes.join(", ")}</td>
              <td>{formatDate(k.last_used_at)}</td>
              <td>{k.expires_at ? formatDate(k.expires_at) : "never"}</td>
              <td>
                <Button variant="ghost" onClick={() => confirmed(`Revoke ${k.name}? Calls with it fail at once.`) && revoke.mutate(k.id)}>Revoke</Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table></div>
    </>
  );
}

/** API keys of an environment: created with scopes, the secret shown once with a copy button, revoked. */
export function ApiKeys({ orgId }: { orgId: string }) {
  const qc = useQueryClient();
  const scope = useScope(orgId);
  const envId = scope.envId;
  const kbs = useKnowledgeBases(scope.tenantId);
  const keys = useQuery({
    queryKey: ["api-keys", envId],
    enabled: !!envId,
    queryFn: () => unwrap(api.GET("/api/v1/environments/{id}/api-keys", { params: { path: { id: envId! } } })),
  });
  const refresh = () => void qc.invalidateQueries({ queryKey: ["api-keys", envId] });
  const [secret, setSecret] = useState<{ key: string; name: string } | null>(null);
  return (
    <>
      <PageHeader title="API keys" />
      <div className="scope-bar">
        <Select label="Environment" value={envId ?? ""} options={scope.envs.map((e) => ({ value: e.id, label: e.name }))} onChange={(e) => scope.setEnv(e.target.value)} />
      </div>
      {envId && <CreateKey envId={envId} tenants={scope.tenants} kbs={kbs.data?.knowledge_bases ?? []} onCreated={(s) => (setSecret(s), refresh())} />}
      <SecretDialog secret={secret} onClose={() => setSecret(null)} />
      {keys.isLoading && <Loading />}
      <ErrorNote error={keys.error ?? scope.error} />
      {keys.data && !keys.data.api_keys.length && (
        <Empty title="No keys in this environment yet.">
          <p>Create one above to call the API from your servers (Authorization: Bearer kbk_…).</p>
        </Empty>
      )}
      {!!keys.data?.api_keys.length && <KeysTable keys={keys.data.api_keys} onRevoked={refresh} />}
    </>
  );
}

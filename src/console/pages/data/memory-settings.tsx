import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../../api/client";
import { ErrorNote, Select } from "../../ui/ui";

type Settings = Schemas["MemorySettings"];

/** The tenant's memory mode and retention (owners and billing admins change them; others see the refusal). */
export function MemorySettings({ tenantId }: { tenantId: string }) {
  const qc = useQueryClient();
  const key = ["memory-settings", tenantId];
  const settings = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET("/api/v1/tenants/{id}/memory-settings", { params: { path: { id: tenantId } } })) });
  const save = useMutation({
    mutationFn: (body: Partial<Pick<Settings, "mode" | "retention">>) => unwrap(api.PATCH("/api/v1/tenants/{id}/memory-settings", { params: { path: { id: tenantId } }, body })),
    onSuccess: (s) => {
      qc.setQueryData(key, s);
      void qc.invalidateQueries({ queryKey: ["memories"] });
    },
  });
  const s = settings.data;
  return (
    <section className="card" aria-labelledby="memory-settings-heading">
      <h2 id="memory-settings-heading">Settings for this tenant</h2>
      <ErrorNote error={settings.error} />
      {s && (
        <div className="inline-form">
          <Select
            label="Durable memory"
            value={s.mode}
            disabled={save.isPending}
            onChange={(e) => save.mutate({ mode: e.target.value as Settings["mode"] })}
            options={[
              { value: "disabled", label: "Off" },
              { value: "durable", label: "On: remembered across chats" },
            ]}
          />
          <Select
            label="What is kept"
            value={s.retention}
            disabled={save.isPending}
            onChange={(e) => save.mutate({ retention: e.target.value as Settings["retention"] })}
            options={[
              { value: "none", label: "Nothing new" },
              { value: "explicit_only", label: "Only what users ask to remember" },
              { value: "automatic", label: "Also facts and preferences users state" },
            ]}
          />
        </div>
      )}
      <ErrorNote error={save.error} />
    </section>
  );
}

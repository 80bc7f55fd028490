import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { navigate } from "../router";
import { Button, confirmed, ErrorNote, Field, Loading, Notice, Select, TextArea } from "../ui/ui";
import { KbHeader, useKnowledgeBase } from "./kb-header";

type Kb = Schemas["KnowledgeBase"];
const PROMPTS: { key: keyof Schemas["KnowledgeBasePrompt"]; label: string; hint: string }[] = [
  { key: "persona", label: "Persona", hint: "Who the assistant is, e.g. “the support desk of Acme”." },
  { key: "instructions", label: "Instructions", hint: "How to answer: tone, length, what to refuse." },
  { key: "customPrompt", label: "Custom prompt (Quick mode)", hint: "Added to the prompt of quick answers." },
  { key: "mainCustomPrompt", label: "Full prompt override (Deep mode)", hint: "Replaces the deep-mode system prompt. Leave empty to keep the default." },
  { key: "sqlAgentInstructions", label: "Table questions: how to query", hint: "For knowledge bases with spreadsheets (tables)." },
  { key: "sqlAnsweringInstructions", label: "Table questions: how to answer", hint: "" },
  { key: "sqlCustomPrompt", label: "Table questions: custom prompt", hint: "" },
  { key: "chartInstructions", label: "Charts", hint: "When and how to draw charts." },
];

type Form = { name: string; description: string; status: Kb["status"]; kbMemoryMode: Kb["kbMemoryMode"] } & Record<(typeof PROMPTS)[number]["key"], string>;

function toForm(kb: Kb): Form {
  const f = { name: kb.name, description: kb.description ?? "", status: kb.status, kbMemoryMode: kb.kbMemoryMode } as Form;
  for (const p of PROMPTS) f[p.key] = kb[p.key] ?? "";
  return f;
}

function DeleteKnowledgeBase({ orgId, kbId }: { orgId: string; kbId: string }) {
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/v1/knowledge-bases/{id}", { params: { path: { id: kbId } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ["knowledge-bases"] });
      navigate(`/o/${orgId}/knowledge-bases`);
    },
  });
  return (
    <section className="card danger-zone">
      <h2>Delete this knowledge base</h2>
      <p>Its documents, chats and indexes are removed. This cannot be undone.</p>
      <Button variant="danger" busy={remove.isPending} onClick={() => confirmed("Delete this knowledge base and everything in it?") && remove.mutate()}>
        Delete knowledge base
      </Button>
      <ErrorNote error={remove.error} />
    </section>
  );
}

/** A knowledge base's name, state and prompt settings; deleting it. */
export function KnowledgeBaseSettings({ orgId, kbId }: { orgId: string; kbId: string }) {
  const qc = useQueryClient();
  const kb = useKnowledgeBase(kbId);
  const [f, setF] = useState<Form | null>(null);
  useEffect(() => {
    if (kb.data && !f) setF(toForm(kb.data));
  }, [kb.data, f]);
  const save = useMutation({
    mutationFn: (form: Form) => {
      const body: Record<string, unknown> = { name: form.name, description: form.description || null, status: form.status, kbMemoryMode: form.kbMemoryMode };
      for (const p of PROMPTS) body[p.key] = form[p.key] || null;
      return unwrap(api.PATCH("/api/v1/knowledge-bases/{id}", { params: { path: { id: kbId } }, body }));
    },
    onSuccess: (updated) => {
      qc.setQueryData(["knowledge-base", kbId], updated);
      setF(toForm(updated));
    },
  });
  const set = (k: keyof Form) => (e: { target: { value: string } }) => f && setF({ ...f, [k]: e.target.value });
  return (
    <>
      <KbHeader orgId={orgId} kbId={kbId} page="Settings" />
      {kb.isLoading && <Loading />}
      {f && (
        <form className="card form" onSubmit={(e) => (e.preventDefault(), save.mutate(f))}>
          <Field label="Name" required value={f.name} onChange={set("name")} />
          <TextArea label="Description" rows={2} value={f.description} onChange={set("description")} />
          <Select
            label="State"
            value={f.status}
            onChange={set("status")}
            options={[
              { value: "active", label: "Active" },
              { value: "inactive", label: "Inactive (refuses new chats and queries)" },
            ]}
          />
          <Select
            label="Memory"
            value={f.kbMemoryMode}
            onChange={set("kbMemoryMode")}
            options={[
              { value: "disabled", label: "Off" },
              { value: "subject", label: "Per end user (the tenant's durable memory)" },
              { value: "kb_restricted", label: "Kept inside this knowledge base" },
            ]}
          />
          <h2>Prompt settings</h2>
          {PROMPTS.map((p) => (
            <TextArea key={p.key} label={p.label} hint={p.hint || undefined} rows={3} value={f[p.key]} onChange={set(p.key)} />
          ))}
          <ErrorNote error={save.error} />
          {save.isSuccess && <Notice>Saved.</Notice>}
          <Button type="submit" variant="primary" busy={save.isPending}>Save settings</Button>
        </form>
      )}
      <DeleteKnowledgeBase orgId={orgId} kbId={kbId} />
    </>
  );
}

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { Button, CopyButton, ErrorNote, Select } from "../../ui/ui";

/** Sharing (private / organization / public link) and forking a chat into a new private one. */
export function ChatActions({ chat, onForked, onChanged }: { chat: Schemas["Chat"]; onForked: (id: string) => void; onChanged: () => void }) {
  const [shareUrl, setShareUrl] = useState<string | null>(null);
  const share = useMutation({
    mutationFn: (access_level: Schemas["Chat"]["access_level"]) => unwrap(api.PATCH("/api/v1/chats/{id}/access", { params: { path: { id: chat.id } }, body: { access_level } })),
    onSuccess: (r) => {
      setShareUrl(r.share_url);
      onChanged();
    },
  });
  const fork = useMutation({
    mutationFn: async () => {
      const id = newId();
      await unwrap(
        api.POST("/api/v1/chats", {
          body: { id, tenant_id: chat.tenant_id, knowledge_base_id: chat.knowledge_base_id, model: chat.model, agent_mode: chat.agent_mode, shared_source_chat_id: chat.id, title: `${chat.title ?? "Chat"} (fork)` },
        }),
      );
      return id;
    },
    onSuccess: onForked,
  });
  return (
    <div className="chat-actions">
      <Select
        label="Who can read this chat"
        value={share.variables ?? chat.access_level}
        onChange={(e) => share.mutate(e.target.value as Schemas["Chat"]["access_level"])}
        options={[
          { value: "private", label: "Only me" },
          { value: "org", label: "Members of the organization" },
          { value: "public", label: "Anyone with the link" },
        ]}
      />
      {shareUrl && (
        <p className="row">
          <a href={shareUrl} target="_blank" rel="noreferrer">Shared link</a> <CopyButton text={shareUrl} label="Copy link" />
        </p>
      )}
      <Button onClick={() => fork.mutate()} busy={fork.isPending}>Fork into a new chat</Button>
      <ErrorNote error={share.error ?? fork.error} />
    </div>
  );
}

/** A UUID v4 (chat ids are chosen by the client); crypto.randomUUID needs a secure context. */
export function newId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

import { useMutation } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { useMe, useScope } from "../../session";
import { Button, CopyButton, ErrorNote, Field, Loading, Notice, PageHeader, Select, TextArea, formatDate } from "../../ui/ui";
import { ScopeBar, useKnowledgeBases } from "../knowledge-bases";
import { hideWidget, tryWidget } from "./try-widget";

function snippets(kb: { id: string; tenant_id: string }, origins: string[], title: string) {
  const service = window.location.origin;
  const tag = `<script src="${service}/widget.js"\n        data-token-url="/kb-token"\n        data-title="${title.replace(/"/g, "&quot;")}" defer></script>`;
  const backend = `// Your server: mints a token for each visitor with your API key (query:rag)
app.post("/kb-token", async (req, res) => {
  const r = await fetch("${service}/api/v1/embed/tokens", {
    method: "POST",
    headers: { Authorization: \`Bearer \${process.env.KB_API_KEY}\`, "Content-Type": "application/json" },
    body: JSON.stringify({
      tenant_id: "${kb.tenant_id}",
      knowledge_base_id: "${kb.id}",
      external_subject_id: req.user?.id ?? req.session.visitorId,
      allowed_origins: ${JSON.stringify(origins.length ? origins : ["https://shop.example.com"])},
      ttl_seconds: 900,
    }),
  });
  res.status(r.status).type("application/json").send(await r.text());
});`;
  return { tag, backend };
}

function Minted({ token }: { token: Schemas["EmbedToken"] }) {
  return (
    <div className="card secret" role="status">
      <h3>Token minted</h3>
      <p>Valid until {formatDate(token.expires_at)} from {token.allowed_origins.join(", ")}, for end user <code>{token.external_subject_id ?? `embed:${token.id}`}</code>. It is shown only now.</p>
      <code data-testid="embed-token">{token.token}</code>
      <CopyButton text={token.token} label="Copy the token" />
    </div>
  );
}

function TryIt({ kb, subject, title, setTitle }: { kb: { id: string; tenant_id: string }; subject: string; title: string; setTitle: (t: string) => void }) {
  const tryIt = useMutation({ mutationFn: () => tryWidget({ tenantId: kb.tenant_id, kbId: kb.id, subject }, { title, color: "#1d4ed8" }) });
  // Leaving the page hides the widget (it stays loaded for the next visit).
  useEffect(() => hideWidget, []);
  return (
    <section className="card" aria-labelledby="try-heading">
      <h2 id="try-heading">Try it here</h2>
      <p>Loads the widget on this page, with tokens minted for this console's origin ({window.location.origin}) as your own end user. Ask a question in the chat at the bottom right.</p>
      <Field label="Widget title" value={title} onChange={(e) => setTitle(e.target.value)} />
      <Button variant="primary" busy={tryIt.isPending} onClick={() => tryIt.mutate()}>Try the widget</Button>
      <ErrorNote error={tryIt.error} />
    </section>
  );
}

function Snippets({ tag, backend }: { tag: string; backend: string }) {
  return (
    <section className="card" aria-labelledby="snippet-heading">
      <h2 id="snippet-heading">Your page</h2>
      <p>Before <code>&lt;/body&gt;</code>:</p>
      <pre className="snippet" data-testid="snippet">{tag}</pre>
      <CopyButton text={tag} label="Copy the script tag" />
      <p>Your backend's <code>/kb-token</code> (Node shown; any language works the same way):</p>
      <pre className="snippet">{backend}</pre>
      <CopyButton text={backend} label="Copy the backend code" />
    </section>
  );
}

/** Embedding: the widget's snippet, a token minted for listed origins, and the widget tried live on this page. */
export default function Embedding({ orgId }: { orgId: string }) {
  const scope = useScope(orgId);
  const me = useMe();
  const kbs = useKnowledgeBases(scope.tenantId);
  const list = kbs.data?.knowledge_bases ?? [];
  const [kbId, setKbId] = useState("");
  const kb = list.find((k) => k.id === kbId) ?? list[0];
  const [origins, setOrigins] = useState("https://shop.example.com");
  const [subject, setSubject] = useState("customer-42");
  const [ttl, setTtl] = useState("900");
  const [title, setTitle] = useState("Ask us");
  const originList = origins.split(/[\s,]+/).map((o) => o.trim()).filter(Boolean);
  const mint = useMutation({
    mutationFn: () =>
      unwrap(api.POST("/api/v1/embed/tokens", { body: { tenant_id: kb!.tenant_id, knowledge_base_id: kb!.id, external_subject_id: subject || undefined, allowed_origins: originList, ttl_seconds: Number(ttl) } })),
  });
  const s = kb ? snippets(kb, originList, title) : null;
  return (
    <>
      <PageHeader title="Embedding" />
      <p>Put a chat on your own site: the widget asks your backend for a short-lived embed token, which only chats with one knowledge base, as one end user, from the origins you list.</p>
      <ScopeBar scope={scope} />
      <ErrorNote error={scope.error ?? kbs.error} />
      {kbs.isLoading && <Loading />}
      {kbs.data && !list.length && <Notice>This tenant has no knowledge base yet: create one first.</Notice>}
      {kb && s && (
        <>
          <Select label="Knowledge base" value={kb.id} onChange={(e) => setKbId(e.target.value)} options={list.map((k) => ({ value: k.id, label: k.name }))} />
          <div className="split">
            <form className="card form" onSubmit={(e) => (e.preventDefault(), mint.mutate())}>
              <h2>Mint a token</h2>
              <TextArea label="Allowed origins (one per line)" rows={2} value={origins} onChange={(e) => setOrigins(e.target.value)} hint="Scheme, host and port only, e.g. https://shop.example.com or http://localhost:3000." />
              <Field label="End user (external_subject_id)" value={subject} onChange={(e) => setSubject(e.target.value)} hint="Who the visitor is: their chats are theirs. Empty: a subject of the token's own." />
              <Field label="Lifetime (seconds, 60–3600)" type="number" min={60} max={3600} value={ttl} onChange={(e) => setTtl(e.target.value)} />
              <ErrorNote error={mint.error} />
              <Button type="submit" variant="primary" busy={mint.isPending}>Mint token</Button>
              {mint.data && <Minted token={mint.data} />}
            </form>
            <TryIt kb={kb} subject={`console-${me.data?.user.id ?? "user"}`} title={title} setTitle={setTitle} />
          </div>
          <Snippets tag={s.tag} backend={s.backend} />
        </>
      )}
    </>
  );
}

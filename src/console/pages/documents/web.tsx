import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { Button, ErrorNote, Field, Notice } from "../../ui/ui";
import { eachLimited } from "./upload";

/** Add one web page, or discover a site's pages (its sitemap and links) and pick which to add. */
export function WebPages({ kb, onAdded }: { kb: { id: string; tenant_id: string }; onAdded: () => void }) {
  const [url, setUrl] = useState("");
  const [found, setFound] = useState<string[] | null>(null);
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [failures, setFailures] = useState<string[]>([]);
  const body = (u: string) => ({ kb_id: kb.id, tenant_id: kb.tenant_id, url: u });
  const addOne = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/documents/upload-url", { body: body(url) })),
    onSuccess: () => (setUrl(""), onAdded()),
  });
  const discover = useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/documents/upload-url-site", { body: body(url) })),
    onSuccess: (r) => {
      setFound(r.urls);
      setPicked(new Set(r.urls));
    },
  });
  const addPicked = useMutation({
    mutationFn: async () => {
      const errors: string[] = [];
      await eachLimited([...picked], 3, async (u) => {
        try {
          await unwrap(api.POST("/api/v1/documents/upload-url", { body: body(u) }));
        } catch (e) {
          errors.push(`${u}: ${(e as Error).message}`);
        }
      });
      setFailures(errors);
    },
    onSuccess: () => (setFound(null), onAdded()),
  });
  return (
    <section className="card" aria-labelledby="web-title">
      <h2 id="web-title">Web pages</h2>
      <form className="inline-form" onSubmit={(e) => (e.preventDefault(), addOne.mutate())}>
        <Field label="Page or site address" type="url" placeholder="https://example.com/help" required value={url} onChange={(e) => setUrl(e.target.value)} />
        <Button type="submit" busy={addOne.isPending}>Add page</Button>
        <Button onClick={() => url && discover.mutate()} busy={discover.isPending} disabled={!url}>Discover site</Button>
      </form>
      <ErrorNote error={addOne.error ?? discover.error ?? addPicked.error} />
      {failures.length > 0 && <ErrorNote error={new Error(`Some pages were refused: ${failures.join("; ")}`)} />}
      {found && !found.length && <Notice>No pages found on that site. Add pages one by one instead.</Notice>}
      {found && found.length > 0 && (
        <fieldset className="scopes">
          <legend>{found.length} pages found: choose which to add</legend>
          <div className="found-list">
            {found.map((u) => (
              <label key={u} className="check">
                <input type="checkbox" checked={picked.has(u)} onChange={() => setPicked((s) => { const n = new Set(s); if (n.has(u)) n.delete(u); else n.add(u); return n; })} />
                {u}
              </label>
            ))}
          </div>
          <Button variant="primary" busy={addPicked.isPending} disabled={!picked.size} onClick={() => addPicked.mutate()}>
            Add {picked.size} pages
          </Button>
        </fieldset>
      )}
    </section>
  );
}

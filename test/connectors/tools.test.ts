import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { ApiError } from "../../src/lib/errors";
import { connectorToolProvider } from "../../src/services/connectors/provider";
import { signup } from "../helpers";
import { connect, runTool, SLUGS, turnTools } from "./helpers";

/** Each connector's read tool, with an input the double knows for alice, and where its links point. */
const READS: Record<string, { tool: string; input: Record<string, unknown>; text: string; link: RegExp }> = {
  github: { tool: "read_file", input: { repo: "acme/alice-repo", path: "README.md" }, text: "Deploy checklist", link: /^https:\/\/github\.com\/acme\/alice-repo\/blob\/main\/README\.md$/ },
  "google-drive": { tool: "read_file", input: { file_id: "file-1001" }, text: "refunded within 30 days", link: /^https:\/\/docs\.google\.com\/document\/d\/file-1001\/edit$/ },
  notion: { tool: "read_page", input: { page_id: "00000000-0000-4000-8000-000000001001" }, text: "refunded within 30 days", link: /^https:\/\/www\.notion\.so\// },
  slack: { tool: "read_channel", input: { channel: "C0GENERAL" }, text: "refunded within 30 days", link: /^https:\/\/acme\.slack\.com\/archives\/C0GENERAL\/p\d+$/ },
  linear: { tool: "read_issue", input: { id: "ENG-1" }, text: "refunded within 30 days", link: /^https:\/\/linear\.app\/acme\/issue\/ENG-1$/ },
  jira: { tool: "read_issue", input: { key: "OPS-1" }, text: "refunded within 30 days", link: /^https:\/\/alice-acme\.atlassian\.net\/browse\/OPS-1$/ },
};
const SEARCH_LINK: Record<string, RegExp> = {
  github: /^https:\/\/github\.com\/acme\/alice-repo\/issues\/1$/,
  "google-drive": /^https:\/\/docs\.google\.com\/document\/d\/file-1001\/edit$/,
  notion: /^https:\/\/www\.notion\.so\/Refund-policy-for-annual-plans-1001$/,
  slack: /^https:\/\/acme\.slack\.com\/archives\/C0GENERAL\/p/,
  linear: /^https:\/\/linear\.app\/acme\/issue\/ENG-1$/,
  jira: /^https:\/\/alice-acme\.atlassian\.net\/browse\/OPS-1$/,
};

describe("connector tools in the toolbox", () => {
  it.each(SLUGS)("%s: search and read call the provider's API and return citable passages linking back", async (slug) => {
    const user = await signup();
    await connect({ cookie: user.cookie }, slug);
    const { tools, scope } = await turnTools(`user:${user.id}`, "t", [slug]);
    expect(tools.map((t) => t.name)).toContain(`app__${slug}__search`);
    for (const t of tools) {
      expect(t.name).toMatch(new RegExp(`^app__${slug}__[a-z_]+$`));
      expect(t.origin).toEqual({ type: "connector", slug, tool: t.name.split("__")[2] });
      expect(t.kind).toBe("passages");
      expect(t.inputSchema.type).toBe("object");
    }
    // local-extractive's plan: the search tool once with the question; the others are left to tool-calling models.
    const search = tools.find((t) => t.name === `app__${slug}__search`)!;
    expect(search.plan!("What is the refund policy?", scope)).toEqual({ query: "What is the refund policy?" });
    expect(tools.filter((t) => t.plan).length).toBe(1);

    const found = await runTool(tools, scope, `app__${slug}__search`, { query: "What is the refund policy for annual plans?" });
    expect(found.isError, found.text).toBeFalsy();
    expect(found.passages!.length).toBe(1);
    const [p] = found.passages!;
    expect(p.text).toContain("Refund policy for annual plans");
    expect(p.url).toMatch(SEARCH_LINK[slug]);
    expect(p.document_id).toBeNull();
    expect(p.filename).toBeTruthy();
    expect(p.chunk_id!.startsWith(`${slug}:`)).toBe(true);

    const nothing = await runTool(tools, scope, `app__${slug}__search`, { query: "zeppelin maintenance" });
    expect(nothing.isError, nothing.text).toBeFalsy();
    expect(nothing.passages).toEqual([]);

    const read = READS[slug];
    const got = await runTool(tools, scope, `app__${slug}__${read.tool}`, read.input);
    expect(got.isError, got.text).toBeFalsy();
    expect(got.passages!.map((x) => x.text).join("\n")).toContain(read.text);
    for (const x of got.passages!) expect(x.url).toMatch(read.link);
  });

  it("bad tool input and provider errors are tool errors, not failed turns", async () => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "github");
    await connect({ cookie: user.cookie }, "jira");
    const { tools, scope } = await turnTools(`user:${user.id}`, "t", ["github", "jira"]);
    const cases: Array<[string, Record<string, unknown>]> = [
      ["app__github__search", {}],
      ["app__github__read_file", { repo: "../../etc", path: "passwd" }],
      ["app__github__read_file", { repo: "acme/alice-repo", path: "missing.md" }],
      ["app__github__read_issue", { repo: "acme/alice-repo", number: -1 }],
      ["app__jira__read_issue", { key: "OPS-999" }],
      ["app__jira__read_issue", { key: "../../admin" }],
    ];
    for (const [name, input] of cases) {
      const r = await runTool(tools, scope, name, input);
      expect(r.isError, `${name} ${JSON.stringify(input)}`).toBe(true);
      expect(r.text).toBeTruthy();
    }
    // Still connected: an ordinary refusal (404) does not disconnect anything.
    expect((await runTool(tools, scope, "app__github__search", { query: "refund" })).isError).toBeFalsy();
  });

  it("quick mode and key subjects get no connector tools", async () => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "linear");
    expect((await turnTools(`user:${user.id}`, "t", ["linear"], "quick")).tools).toEqual([]);
    expect((await turnTools("key:key_1", "t", ["linear"])).tools).toEqual([]);
    expect((await turnTools(`user:${user.id}`, "t", [])).tools).toEqual([]);
  });

  it("validate refuses unknown and unconnected slugs up front, naming each (400 connector_not_connected)", async () => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "notion");
    const scope = (subject: string) => ({ db: createDb(env.DB), env, chat: { id: "c", organizationId: "o", environmentId: "e", tenantId: "t", knowledgeBaseId: "k" }, subject, mode: "deep" as const, depth: 0 });
    const settings = (slugs: string[]) => ({ websearch: false, mcpServerIds: [], connectorSlugs: slugs, delegateIds: [], autoSkills: [] });
    await connectorToolProvider.validate!(scope(`user:${user.id}`), settings(["notion"]));
    await connectorToolProvider.validate!(scope(`user:${user.id}`), settings([]));
    const err = await connectorToolProvider.validate!(scope(`user:${user.id}`), settings(["notion", "slack", "myspace"])).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe("connector_not_connected");
    expect(err.status).toBe(400);
    expect(err.message).toContain("slack");
    expect(err.message).toContain("myspace");
    expect(err.message).not.toContain("notion");
    expect(err.details.map((d: any) => d.path)).toEqual(["body.connector_slugs.1", "body.connector_slugs.2"]);
    // Another subject, or a key turn without a subject, has no connections.
    const other = await signup();
    expect((await connectorToolProvider.validate!(scope(`user:${other.id}`), settings(["notion"])).catch((e) => e)).code).toBe("connector_not_connected");
    expect((await connectorToolProvider.validate!(scope("key:key_1"), settings(["notion"])).catch((e) => e)).code).toBe("connector_not_connected");
  });

  it("a connector endpoint outside the URL guard's allowlist is refused", async () => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "linear");
    const guarded = { ...env, CONNECTOR_ENDPOINTS: JSON.stringify({ linear: { authorize_url: "http://10.0.0.1/a", token_url: "http://10.0.0.1/t", api_base_url: "http://10.0.0.1/api" } }) };
    const { runConnectorTool } = await import("../../src/services/connectors/use");
    await expect(runConnectorTool({ db: createDb(env.DB), env: guarded }, `user:${user.id}`, "linear", "search", { query: "refund" }, AbortSignal.timeout(5000))).rejects.toThrow(/not an allowed address/);
  });
});

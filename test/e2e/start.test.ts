import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root, scratchDir, stopServer, waitForServer } from "../bench/lib.ts";
import { knownVariables } from "../tools/start.ts";
import { freePort } from "./browser-helpers.ts";

/**
 * `npm start` and `npm run seed` as a new user runs them (issue 27): configuration from the environment reaches
 * the Worker (`MODELS=… npm start`), the output has the migrations once and no error line or stack trace (offline,
 * no `getaddrinfo ENOTFOUND`), and the seed prints the README's variables, idempotently.
 */
describe("npm start and npm run seed", () => {
  let child: ChildProcess;
  let base: string;
  let state: string;
  let scratch: string;
  let output = "";

  beforeAll(async () => {
    const port = await freePort();
    state = scratchDir("kb-start-");
    scratch = mkdtempSync(path.join(tmpdir(), "kb-seed-"));
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of knownVariables()) delete env[name];
    // As a user would type it: MODELS=… npm start (a provider model that is only listed, never called).
    env.MODELS = JSON.stringify([{ id: "from-the-environment", context_window: 8000, pricing: { input_per_1k: 1, output_per_1k: 1 } }]);
    env.OPENAI_API_KEY = "not-a-real-key";
    child = spawn("npm", ["start", "--", "--port", String(port), "--persist-to", state], { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    base = `http://localhost:${port}`;
    try {
      await waitForServer(base, 170_000);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${output}`);
    }
  }, 180_000);

  afterAll(async () => {
    await stopServer(child);
    rmSync(state, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  const seed = (...args: string[]) => {
    const r = spawnSync("npm", ["run", "-s", "seed", "--", ...args], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, BASE: base, SEED_CACHE: path.join(scratch, "seed.json") },
    });
    expect(r.status, r.stderr).toBe(0);
    const vars = Object.fromEntries([...r.stdout.matchAll(/^export (.*)$/gm)].flatMap((m) => [...m[1].matchAll(/(\w+)=('[^']*'|\S+)/g)].map((v) => [v[1], v[2].replace(/^'|'$/g, "")])));
    return { vars, stdout: r.stdout, stderr: r.stderr };
  };

  it("reads configuration from the environment", async () => {
    const { vars } = seed();
    const res = await fetch(`${base}/api/v1/chats/models`, { headers: { Authorization: `Bearer ${vars.KEY}` } });
    const { models } = (await res.json()) as { models: { id: string; available: boolean }[] };
    expect(models.find((m) => m.id === "from-the-environment")).toMatchObject({ available: true });
  });

  it("prints the migrations once and no error line or stack trace", () => {
    expect(output.match(/Applied \d+ migration\(s\) to the local database/g)).toHaveLength(1);
    expect(output).not.toMatch(/│\s*0001_/);
    expect(output).not.toMatch(/ENOTFOUND|getaddrinfo|\n\s+at .+:\d+:\d+\)|✘|\[ERROR\]|^Error/m);
    // Values from the environment are handed over as secrets, never printed.
    expect(output).not.toContain("not-a-real-key");
  });

  it("seed: the README's variables, the same ones when run again, fresh ones with --reset", async () => {
    const first = seed();
    expect(Object.keys(first.vars).sort()).toEqual(["API", "AUTH", "BASE", "COOKIE", "DOC_ID", "ENV_ID", "KB_ID", "KEY", "ORG_ID", "TENANT_ID"]);
    expect(first.vars.BASE).toBe(base);
    expect(first.vars.API).toBe(`${base}/api/v1`);
    expect(first.stdout).toMatch(/^json\(\) \{/m);
    const docs = await fetch(`${base}/api/v1/documents?kb_id=${first.vars.KB_ID}`, { headers: { Authorization: `Bearer ${first.vars.KEY}` } });
    const { documents } = (await docs.json()) as { documents: { filename: string; status: string }[] };
    expect(documents.map((d) => `${d.filename} ${d.status}`).sort()).toEqual(["handbook.md processed", "shipping.md processed"]);

    const again = seed();
    for (const name of ["ORG_ID", "ENV_ID", "TENANT_ID", "KEY", "KB_ID", "DOC_ID"]) expect(again.vars[name], name).toBe(first.vars[name]);
    expect(again.stderr).not.toMatch(/created|uploaded|signed up/);

    const fresh = seed("--reset");
    expect(fresh.vars.ORG_ID).not.toBe(first.vars.ORG_ID);
    expect(fresh.vars.KB_ID).not.toBe(first.vars.KB_ID);
  }, 120_000);
});

/**
 * The layer lint (test/lint/layers.mjs) on a scratch copy of src/: the copy as it is passes, and each kind of
 * violation written into it fails the lint with a message naming it.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = path.join(import.meta.dirname, "../..");
const script = path.join(root, "test/lint/layers.mjs");
let scratch = "";

function copyOfSrc(): string {
  scratch = mkdtempSync(path.join(tmpdir(), "layers-"));
  cpSync(path.join(root, "src"), path.join(scratch, "src"), {
    recursive: true,
    filter: (p) => p !== path.join(root, "src", "console"),
  });
  return scratch;
}

function lint(dir: string) {
  const r = spawnSync(process.execPath, [script, "--root", dir], { encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = "";
});

describe("layer lint", () => {
  it("passes on the source as it is", () => {
    const r = lint(copyOfSrc());
    expect(r.output).toContain("lint: layers point down");
    expect(r.status).toBe(0);
  });

  it("fails when a service imports a route, Hono, a Durable Object or the capability registry", () => {
    const dir = copyOfSrc();
    writeFileSync(
      path.join(dir, "src/services/scratch-violation.ts"),
      [
        'import type { Context } from "hono";',
        'import { chatRoutes } from "../routes/chats";',
        'import type { ChatSession } from "../durable/chat-session";',
        'import { CAPABILITIES } from "../capabilities";',
        "export const x = (c: Context, s: ChatSession) => [c, s, chatRoutes, CAPABILITIES];",
      ].join("\n"),
    );
    const r = lint(dir);
    expect(r.status).toBe(1);
    expect(r.output).toContain("src/services/scratch-violation.ts:1 imports hono");
    expect(r.output).toContain("src/services/scratch-violation.ts:2 imports a route");
    expect(r.output).toContain("src/services/scratch-violation.ts:3 imports a Durable Object");
    expect(r.output).toContain("src/services/scratch-violation.ts:4 imports the capability registry");
  });

  it("fails on an import cycle, even one of type imports only", () => {
    const dir = copyOfSrc();
    writeFileSync(path.join(dir, "src/lib/scratch-a.ts"), 'import type { B } from "./scratch-b";\nexport type A = { b?: B };\n');
    writeFileSync(path.join(dir, "src/lib/scratch-b.ts"), 'import type { A } from "./scratch-a";\nexport type B = { a?: A };\n');
    const r = lint(dir);
    expect(r.status).toBe(1);
    expect(r.output).toMatch(/import cycle \(counting type imports\) of 2 files: src\/lib\/scratch-a\.ts -> src\/lib\/scratch-b\.ts -> src\/lib\/scratch-a\.ts/);
  });

  it("fails when the pipeline imports a capability or a capability the pipeline", () => {
    const dir = copyOfSrc();
    writeFileSync(path.join(dir, "src/services/answer/scratch.ts"), 'import { sqlProvider } from "../tables/tool";\nexport const p = sqlProvider;\n');
    writeFileSync(path.join(dir, "src/services/connectors/scratch.ts"), 'import { runTurn } from "../answer/turn";\nexport const t = runTurn;\n');
    const r = lint(dir);
    expect(r.status).toBe(1);
    expect(r.output).toContain("src/services/answer/scratch.ts:1 (pipeline) imports a capability (src/services/tables/tool.ts)");
    expect(r.output).toContain("src/services/connectors/scratch.ts:1 (capability) imports the pipeline (src/services/answer/turn.ts)");
  });
});

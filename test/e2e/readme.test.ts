import net from "node:net";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root, scratchDir, stopServer, waitForServer } from "../bench/lib.ts";
import { codeBlocks, notRunReason, relocate, snippetPath, unmet, type CodeBlock } from "../docs/readme.ts";
import { knownVariables } from "../tools/start.ts";
import { freePort } from "./browser-helpers.ts";

/**
 * The doc runner (issue 27): every ```sh block of README.md, in order, pasted into one bash session against a
 * freshly started `npm run dev:stack` (the service and the local stand-ins, on ports of its own, with an empty
 * state directory). A block fails the test when a command in it fails (the session runs with `set -e`, as
 * pasting would show the error) or when its output misses one of its `# expect:` lines. Markers and what is not
 * run: test/docs/readme.ts. The blocks run in a scratch directory (files they create land there); `npm` and
 * `npx` run in the checkout, as in a reader's terminal.
 */
const README = readFileSync(path.join(root, "README.md"), "utf8");
const BLOCK_TIMEOUT_MS = 240_000;

class Session {
  private shell: ChildProcess;
  private output = "";
  private exited: number | null = null;
  private waiters: (() => void)[] = [];
  private n = 0;

  constructor(private readonly work: string, env: NodeJS.ProcessEnv) {
    this.shell = spawn("bash", ["--noprofile", "--norc"], { cwd: work, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    const collect = (d: Buffer) => {
      this.output += d.toString();
      this.waiters.splice(0).forEach((w) => w());
    };
    this.shell.stdout!.on("data", collect);
    this.shell.stderr!.on("data", collect);
    this.shell.on("exit", (code) => {
      this.exited = code ?? 1;
      this.waiters.splice(0).forEach((w) => w());
    });
    this.shell.stdin!.write(
      `set -e\nREPO=${JSON.stringify(root)}\nnpm() { (cd "$REPO" && command npm "$@"); }\nnpx() { (cd "$REPO" && command npx "$@"); }\n`,
    );
  }

  /** Sources the block in the session; resolves with its output and, when the shell died, its exit code. */
  async run(code: string): Promise<{ output: string; exitCode: number | null; timedOut: boolean }> {
    const file = path.join(this.work, ".blocks", `${++this.n}.sh`);
    writeFileSync(file, code + "\n");
    const mark = `@@block-${this.n}-done@@`;
    const from = this.output.length;
    this.shell.stdin!.write(`source ${JSON.stringify(file)} < /dev/null\nprintf '\\n%s\\n' ${mark}\n`);
    const deadline = Date.now() + BLOCK_TIMEOUT_MS;
    while (!this.output.includes(mark, from) && this.exited === null && Date.now() < deadline) {
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 1000);
      });
    }
    const done = this.output.includes(mark, from);
    const output = this.output.slice(from, done ? this.output.indexOf(mark, from) : undefined);
    return { output, exitCode: done ? null : this.exited, timedOut: !done && this.exited === null };
  }

  async close(): Promise<void> {
    await stopServer(this.shell);
  }
}

/**
 * A base for the stand-ins' ports (STACK_PORT+1 … +12) whose ports are all free now, below Linux's ephemeral range
 * (32768 and up): there, any process's outgoing connection may take one of them before the stack listens.
 */
async function freeStackBase(): Promise<number> {
  const free = (p: number) =>
    new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once("error", () => resolve(false));
      s.listen(p, "127.0.0.1", () => s.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 10_000 + Math.floor(Math.random() * 22_000);
    const ports = Array.from({ length: 12 }, (_, i) => base + 1 + i);
    if ((await Promise.all(ports.map(free))).every(Boolean)) return base;
  }
  throw new Error("no free range of 12 ports found below 32768 for the README's stand-in servers");
}

/** `npm run dev:stack` on its own ports and state, with none of the developer's configuration from the environment. */
async function startStack(): Promise<{ child: ChildProcess; port: number; stackBase: number; state: string; log: () => string }> {
  const port = await freePort();
  const stackBase = await freeStackBase();
  const state = scratchDir("kb-readme-");
  const env: NodeJS.ProcessEnv = { ...process.env, STACK_PORT: String(stackBase) };
  for (const name of knownVariables()) delete env[name];
  const child = spawn("npm", ["run", "dev:stack", "--", "--port", String(port), "--persist-to", state], { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout!.on("data", (d) => (log = (log + d).slice(-20_000)));
  child.stderr!.on("data", (d) => (log = (log + d).slice(-20_000)));
  return { child, port, stackBase, state, log: () => log };
}

describe("the doc runner itself", () => {
  const sample = [
    "# Guide", "", "## Start", "", "```sh", "npm install", "npm start   # serves http://localhost:8787", "```", "",
    "## Use", "", "```sh", "# needs: dev:stack", "curl -s http://localhost:8787/api/v1/x   # expect: \"ok\":true", "echo 127.0.0.1:8702/open   # expect: /open$/m", "```", "",
    "```sh", "# needs: a Cloudflare account", "npx wrangler deploy", "```", "",
    "```ts", "// test/docs/snippets/x.ts", "console.log(1);", "```",
  ].join("\n");

  it("reads blocks, markers and snippet files, and relocates the README's ports", () => {
    const blocks = codeBlocks(sample, "sh");
    expect(blocks.map((b) => [b.index, b.line, b.heading])).toEqual([[1, 5, "Start"], [2, 12, "Use"], [3, 18, "Use"]]);
    expect(blocks[1].expects).toEqual(['"ok":true', /open$/m]);
    expect(blocks.map(notRunReason)).toEqual(["installs, starts or tests the service: the runner does that itself", null, "needs a Cloudflare account"]);
    expect(relocate(blocks[1].code, 40001, 30000)).toContain("http://localhost:40001/api/v1/x");
    expect(relocate(blocks[1].code, 40001, 30000)).toContain("127.0.0.1:30002/open");
    expect(snippetPath(codeBlocks(sample, "ts")[0])).toBe("test/docs/snippets/x.ts");
  });

  it("a block fails on an unmet expect line, and on a failing command", async () => {
    const b = codeBlocks(sample, "sh")[1];
    expect(unmet(b, '{"ok":true}\n127.0.0.1:8702/open\n')).toEqual([]);
    expect(unmet(b, '{"ok":false}\n127.0.0.1:8702/open\n')).toEqual(['"ok":true']);
    const work = mkdtempSync(path.join(tmpdir(), "kb-runner-"));
    mkdirSync(path.join(work, ".blocks"));
    const session = new Session(work, process.env);
    try {
      expect(await session.run("X=1\necho one")).toMatchObject({ output: expect.stringContaining("one"), exitCode: null });
      expect((await session.run('echo "still $X"')).output).toContain("still 1");
      const failed = await session.run("false\necho never");
      expect(failed.exitCode).toBe(1);
      expect(failed.output).not.toContain("never");
    } finally {
      await session.close();
      rmSync(work, { recursive: true, force: true });
    }
  });
});

const describeBlock = (b: CodeBlock) => `README.md:${b.line} (sh block ${b.index}, "${b.heading}")`;

describe("README.md", () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let session: Session;
  let work: string;

  beforeAll(async () => {
    stack = await startStack();
    try {
      await waitForServer(`http://localhost:${stack.port}`, 170_000);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${stack.log()}`);
    }
    work = mkdtempSync(path.join(tmpdir(), "kb-readme-work-"));
    mkdirSync(path.join(work, ".blocks"));
    const env: NodeJS.ProcessEnv = { ...process.env, SEED_CACHE: path.join(work, "seed.json") };
    for (const name of [...knownVariables(), "BASE", "API", "KEY", "AUTH", "COOKIE"]) delete env[name];
    session = new Session(work, env);
  }, 180_000);

  afterAll(async () => {
    await session?.close();
    if (stack) {
      await stopServer(stack.child);
      rmSync(stack.state, { recursive: true, force: true });
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("every TypeScript snippet that names its file is that file, word for word", () => {
    const snippets = codeBlocks(README, "ts").filter((b) => snippetPath(b));
    for (const b of snippets) {
      const file = readFileSync(path.join(root, snippetPath(b)!), "utf8").trimEnd();
      expect(b.code.trimEnd(), `README.md:${b.line} differs from ${snippetPath(b)}`).toBe(file);
    }
    console.log(`README: ${snippets.length} TypeScript snippets match their files under test/docs/snippets/`);
  });

  it("every sh block runs when pasted in order", async () => {
    const blocks = codeBlocks(README, "sh");
    const notRun: string[] = [];
    let ran = 0;
    for (const b of blocks) {
      const reason = notRunReason(b);
      if (reason) {
        const syntax = spawnSync("bash", ["-n"], { input: b.code, encoding: "utf8" });
        expect(syntax.status, `${describeBlock(b)} is not valid bash:\n${syntax.stderr}`).toBe(0);
        notRun.push(`${describeBlock(b)}: ${reason}`);
        continue;
      }
      const { output, exitCode, timedOut } = await session.run(relocate(b.code, stack.port, stack.stackBase));
      const tail = output.slice(-3000);
      expect(timedOut, `${describeBlock(b)} still running after ${BLOCK_TIMEOUT_MS / 1000} s; output:\n${tail}`).toBe(false);
      expect(exitCode, `${describeBlock(b)} failed (exit ${exitCode}); output:\n${tail}\n--- service log ---\n${stack.log().slice(-3000)}`).toBe(null);
      expect(unmet(b, output), `${describeBlock(b)}: expected output missing; output:\n${tail}`).toEqual([]);
      ran++;
    }
    console.log(`README: ${ran} of ${blocks.length} sh blocks run; ${notRun.length} syntax-checked only:\n  ${notRun.join("\n  ")}`);
    expect(ran).toBeGreaterThan(0);
  }, 30 * 60_000);
});

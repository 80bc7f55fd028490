/**
 * The README's code blocks, as the doc runner (test/e2e/readme.test.ts) reads them.
 *
 * Markers, written as shell comments inside a ```sh block (on their own line or after a command):
 *   # expect: <text>     the block's output (stdout and stderr) must contain <text>; `# expect: /regex/` matches
 *                        a regular expression instead. A block may have several.
 *   # needs: <what>      the block needs something beyond `npm start`. `dev:stack` (the local stand-ins of
 *                        `npm run dev:stack`) is provided by the runner, which always runs the stack; anything
 *                        else (a Cloudflare account, a dataset) is not: such a block is only syntax-checked.
 * A block made only of `npm install`, `npm start`, `npm run dev:stack` or `npm test` is what the runner itself
 * does (it runs inside an installed checkout and starts the service), so it is syntax-checked too.
 *
 * A ```ts block whose first line is `// test/docs/snippets/<name>.ts` is that file, word for word: the type
 * check compiles it and a README block runs it.
 */

export interface CodeBlock {
  /** 1-based position among the README's blocks of this language. */
  index: number;
  lang: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The nearest heading above the block. */
  heading: string;
  code: string;
  expects: (string | RegExp)[];
  needs: string[];
}

/** What the runner provides; any other `# needs:` makes a block syntax-checked only. */
export const PROVIDED = new Set(["dev:stack"]);

const SERVICE_COMMANDS = /^(npm (install|ci|start|test)|npm run dev:stack)(\s+--\s.*)?$/;

export function codeBlocks(markdown: string, lang: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const h = /^(#{1,6})\s+(.*)$/.exec(lines[i]);
    if (h) heading = h[2];
    const fence = /^(\s*)```(\S*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const indent = fence[1].length;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i].slice(indent));
    if (fence[2] !== lang) continue;
    const code = body.join("\n");
    blocks.push({ index: blocks.length + 1, lang, line: start + 1, heading, code, expects: markers(code, "expect").map(pattern), needs: markers(code, "needs") });
  }
  return blocks;
}

function markers(code: string, name: string): string[] {
  const re = new RegExp(`(?:^|\\s)#\\s*${name}:\\s*(.+?)\\s*$`);
  return code.split("\n").flatMap((l) => {
    const m = re.exec(l);
    return m ? [m[1]] : [];
  });
}

function pattern(text: string): string | RegExp {
  const m = /^\/(.+)\/([a-z]*)$/.exec(text);
  return m ? new RegExp(m[1], m[2]) : text;
}

/** Why the runner does not run this block (it is syntax-checked instead), or null when it runs it. */
export function notRunReason(block: CodeBlock): string | null {
  const missing = block.needs.filter((n) => !PROVIDED.has(n));
  if (missing.length) return `needs ${missing.join(", ")}`;
  const commands = block.code
    .split("\n")
    .map((l) => l.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);
  if (commands.length && commands.every((c) => SERVICE_COMMANDS.test(c))) return "installs, starts or tests the service: the runner does that itself";
  return null;
}

/** The expectations the output does not meet. */
export function unmet(block: CodeBlock, output: string): (string | RegExp)[] {
  return block.expects.filter((e) => (typeof e === "string" ? !output.includes(e) : !e.test(output)));
}

/**
 * The block as the runner pastes it: the README's addresses (the service at localhost:8787, the stand-ins of
 * `npm run dev:stack` at 127.0.0.1:8701-8719) moved to the runner's own ports.
 */
export function relocate(code: string, servicePort: number, stackBase: number): string {
  return code
    .replace(/\blocalhost:8787\b/g, `localhost:${servicePort}`)
    .replace(/\b127\.0\.0\.1:8787\b/g, `127.0.0.1:${servicePort}`)
    .replace(/\b(127\.0\.0\.1|localhost):87(0[1-9]|1[0-9])\b/g, (_m, host: string, n: string) => `${host}:${stackBase + Number(n)}`);
}

/** The snippet file a ```ts block declares on its first line (`// test/docs/snippets/x.ts`), if any. */
export function snippetPath(block: CodeBlock): string | null {
  const m = /^\/\/\s*(test\/docs\/snippets\/[\w.-]+\.ts)\s*$/.exec(block.code.split("\n")[0] ?? "");
  return m ? m[1] : null;
}

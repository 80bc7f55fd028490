import { describe, expect, it } from "vitest";
import { renderMarkdown, sanitizeHtml } from "../../src/lib/markdown";

// Vectors that must never produce script, event handlers or script URLs.
const VECTORS = [
  "<script>alert(1)</script>",
  "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
  "<scr<script>ipt>alert(1)</scr</script>ipt>",
  '<img src=x onerror=alert(1)>',
  '<img src="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">',
  "<svg onload=alert(1)><circle r=5 /></svg>",
  '<math><mtext><script>alert(1)</script></mtext></math>',
  '<a href="  javascript:alert(1)">x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="java\tscript:alert(1)">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<a href="data:text/html,<script>alert(1)</script>">x</a>',
  '<details open ontoggle=alert(1)>x</details>',
  '<p style="background:url(javascript:alert(1))">x</p>',
  '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x">',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<form action="javascript:alert(1)"><button formaction="javascript:alert(2)">go</button></form>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<base href="https://evil.example/">',
  '<link rel="stylesheet" href="https://evil.example/x.css">',
  '<style>body{background:url(javascript:alert(1))}</style>',
  "[x](javascript:alert(1))",
  "[x](  javascript:alert(1) )",
  "![x](javascript:alert(1))",
  '<a href="https://ok.example" onmouseover="alert(1)">x</a>',
  "<!-- <script>alert(1)</script> -->",
  '<input type="image" src="https://evil.example/x" onfocus=alert(1) autofocus>',
];

describe("Markdown rendering and sanitization", () => {
  for (const v of VECTORS) {
    it(`neutralizes ${v.slice(0, 60)}`, () => {
      const out = renderMarkdown(`Before\n\n${v}\n\nAfter`);
      expect(out).not.toMatch(/<script|<svg|<math|<iframe|<object|<embed|<form|<button|<meta|<base|<link|<style|<!--/i);
      expect(out).not.toMatch(/\son[a-z]+\s*=/i);
      expect(out).not.toMatch(/(java|vb)script:/i);
      expect(out).not.toMatch(/data:text/i);
      expect(out).not.toMatch(/style=/i);
      expect(out).toContain("Before");
      expect(out).toContain("After");
    });
  }

  it("keeps document structure", () => {
    const out = renderMarkdown("## Title\n\n1. one\n2. two\n\n> quote\n\n`code` ~~gone~~ <kbd>Ctrl</kbd> H<sub>2</sub>O\n\n---\n");
    expect(out).toContain("<h2>Title</h2>");
    expect(out).toContain("<ol>");
    expect(out).toContain("<blockquote>");
    expect(out).toContain("<code>code</code>");
    expect(out).toContain("<del>gone</del>");
    expect(out).toContain("<kbd>Ctrl</kbd>");
    expect(out).toContain("<sub>2</sub>");
    expect(out).toContain("<hr>");
    expect(renderMarkdown("[mail](mailto:a@example.com) [anchor](#top)")).toMatch(/href="mailto:a@example.com".*href="#top"/);
    expect(sanitizeHtml('<ol start="3"><li>x</li></ol>')).toBe('<ol start="3"><li>x</li></ol>');
    expect(sanitizeHtml('<code class="x onclick">y</code>')).toBe("<code>y</code>");
  });
});

/** The widget's stylesheet, inside its shadow root: the page's CSS cannot break it, and it cannot leak out. */
export function widgetCss(color: string, side: "left" | "right"): string {
  return `
:host{all:initial}
*{box-sizing:border-box}
.wrap{--p:${color};position:fixed;${side}:20px;bottom:20px;z-index:2147483000;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328}
button{font:inherit;cursor:pointer}
:focus-visible{outline:3px solid var(--p);outline-offset:2px}
.launcher{width:56px;height:56px;border-radius:50%;border:0;background:var(--p);color:#fff;box-shadow:0 4px 14px rgba(0,0,0,.25);display:flex;align-items:center;justify-content:center;margin-${side}:auto}
.launcher svg{width:28px;height:28px;fill:currentColor}
.panel{position:absolute;${side}:0;bottom:70px;width:min(380px,calc(100vw - 40px));height:min(560px,calc(100vh - 110px));background:#fff;border:1px solid #d1d9e0;border-radius:14px;box-shadow:0 12px 40px rgba(0,0,0,.25);display:flex;flex-direction:column;overflow:hidden}
.panel[hidden]{display:none}
header{display:flex;align-items:center;gap:8px;padding:10px 12px;background:var(--p);color:#fff}
header h2{flex:1;margin:0;font-size:16px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
header button{background:transparent;color:#fff;border:1px solid rgba(255,255,255,.5);border-radius:8px;padding:2px 8px}
.log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:10px;background:#f6f8fa}
.msg{max-width:88%;padding:8px 11px;border-radius:12px;white-space:pre-wrap;overflow-wrap:anywhere}
.user{align-self:flex-end;background:var(--p);color:#fff;border-bottom-right-radius:4px}
.bot{align-self:flex-start;background:#fff;border:1px solid #d1d9e0;border-bottom-left-radius:4px}
.bot.error{border-color:#cf222e;color:#cf222e}
.note{font-size:12px;color:#59636e;margin-top:4px;white-space:normal}
.cite{border:0;background:none;color:var(--p);font-weight:600;padding:0 1px;font-size:.85em;vertical-align:super;line-height:1}
.sources{margin-top:6px;white-space:normal;display:flex;flex-direction:column;gap:4px}
details{border:1px solid #d1d9e0;border-radius:8px;padding:4px 8px;font-size:13px;background:#f6f8fa}
summary{cursor:pointer;font-weight:600;overflow-wrap:anywhere}
details p{margin:6px 0 2px;white-space:pre-wrap;color:#1f2328}
details a{color:var(--p)}
form{display:flex;gap:8px;padding:10px;border-top:1px solid #d1d9e0;background:#fff}
textarea{flex:1;resize:none;font:inherit;padding:8px 10px;border:1px solid #d1d9e0;border-radius:10px;min-height:40px;max-height:120px;color:#1f2328;background:#fff}
.send,.stop{border:0;border-radius:10px;padding:0 14px;background:var(--p);color:#fff}
.stop{background:#59636e}
.send[disabled]{opacity:.5;cursor:default}
[hidden]{display:none!important}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (prefers-color-scheme:dark){.panel,form,textarea,.bot{background:#161b22;color:#e6edf3;border-color:#3d444d}.log,details{background:#0d1117;border-color:#3d444d}details p{color:#e6edf3}.note{color:#9198a1}}
`;
}

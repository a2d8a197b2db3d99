/** The element's own stylesheet, inside its shadow root: the site's CSS does not reach in, this does not leak out. */
export const styles = `
:host {
  --accent: #2563eb;
  --bg: #ffffff;
  --fg: #111827;
  --muted: #6b7280;
  --border: #e5e7eb;
  --code-bg: #f3f4f6;
  --user-bg: #eef2ff;
  all: initial;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg);
}
@media (prefers-color-scheme: dark) {
  :host {
    --accent: #60a5fa;
    --bg: #111827;
    --fg: #f3f4f6;
    --muted: #9ca3af;
    --border: #374151;
    --code-bg: #1f2937;
    --user-bg: #1e293b;
  }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
button, textarea { font: inherit; color: inherit; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.launcher {
  position: fixed; right: 20px; bottom: 20px; z-index: 2147483000;
  border: 0; border-radius: 999px; padding: 10px 16px; cursor: pointer;
  background: var(--accent); color: #fff; font-weight: 600; box-shadow: 0 4px 14px rgb(0 0 0 / 0.25);
}
.launcher kbd { font: inherit; opacity: 0.8; margin-left: 6px; font-size: 12px; }
dialog {
  width: min(440px, calc(100vw - 24px)); height: min(640px, calc(100vh - 24px));
  margin: auto 12px 12px auto; padding: 0; border: 1px solid var(--border); border-radius: 12px;
  background: var(--bg); color: var(--fg); box-shadow: 0 12px 40px rgb(0 0 0 / 0.3);
  flex-direction: column; overflow: hidden;
}
dialog[open] { display: flex; animation: rise 160ms ease-out; }
dialog::backdrop { background: rgb(0 0 0 / 0.25); }
@keyframes rise { from { transform: translateY(12px); opacity: 0; } to { transform: none; opacity: 1; } }
@media (prefers-reduced-motion: reduce) {
  dialog[open] { animation: none; }
  * { transition: none !important; scroll-behavior: auto !important; }
}
header { display: flex; align-items: center; gap: 8px; padding: 10px 14px; border-bottom: 1px solid var(--border); }
header h2 { flex: 1; margin: 0; font-size: 15px; }
.icon { border: 0; background: none; cursor: pointer; padding: 4px 8px; border-radius: 6px; color: var(--muted); }
.icon:hover { background: var(--code-bg); color: var(--fg); }
.log { flex: 1; overflow-y: auto; padding: 12px 14px; display: flex; flex-direction: column; gap: 12px; }
.msg { max-width: 100%; overflow-wrap: anywhere; }
.msg.user { align-self: flex-end; background: var(--user-bg); padding: 6px 10px; border-radius: 10px; white-space: pre-wrap; }
.msg.user p { margin: 0; }
.answer > :first-child { margin-top: 0; }
.answer > :last-child { margin-bottom: 0; }
.answer a, .sources a { color: var(--accent); }
.answer a.cite { text-decoration: none; font-size: 12px; vertical-align: super; }
.answer code { background: var(--code-bg); padding: 1px 4px; border-radius: 4px; font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; }
.code { position: relative; }
.code pre { background: var(--code-bg); padding: 10px; border-radius: 8px; overflow-x: auto; margin: 8px 0; }
.code pre code { padding: 0; background: none; }
.copy { position: absolute; top: 6px; right: 6px; font-size: 12px; border: 1px solid var(--border); background: var(--bg); border-radius: 6px; padding: 2px 8px; cursor: pointer; }
.sources { margin: 8px 0 0; padding-left: 20px; font-size: 13px; color: var(--muted); }
.feedback { display: flex; align-items: center; gap: 4px; margin-top: 6px; color: var(--muted); font-size: 13px; }
.feedback [aria-pressed="true"] { color: var(--accent); background: var(--code-bg); font-weight: 600; }
.comment { display: flex; gap: 6px; margin-top: 6px; }
.comment textarea { flex: 1; min-height: 2.4em; }
.starters { list-style: none; margin: 0; padding: 0 14px 8px; display: flex; flex-wrap: wrap; gap: 6px; }
.starters button { border: 1px solid var(--border); background: var(--bg); border-radius: 999px; padding: 4px 10px; cursor: pointer; }
.starters button:hover { border-color: var(--accent); }
.error { margin: 0 14px 8px; padding: 8px 10px; border-radius: 8px; background: #fef2f2; color: #991b1b; }
@media (prefers-color-scheme: dark) { .error { background: #450a0a; color: #fecaca; } }
form.ask { display: flex; gap: 8px; padding: 10px 14px; border-top: 1px solid var(--border); }
textarea { resize: none; border: 1px solid var(--border); border-radius: 8px; padding: 6px 8px; background: var(--bg); }
form.ask textarea { flex: 1; }
.send, .comment button { border: 0; border-radius: 8px; padding: 6px 12px; background: var(--accent); color: #fff; cursor: pointer; }
.send:disabled { opacity: 0.5; cursor: default; }
.status { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`;

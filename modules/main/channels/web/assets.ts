// channels/web/assets: the web console's page, style and script, served from
// the image (on the board these strings are preloaded into flash). One plain
// HTML shell for every page; app.js reads the page from the path, asks
// /api/session who is there, and renders with textContent only (whatever a
// chat or a file holds is shown as text, never as markup). No inline script or
// style: the server's Content-Security-Policy allows only these files. Their
// bytes are budgeted (WEB_ASSETS_MAX_BYTES) and reported by npm run size.

export const PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>xsclaw</title><link rel="stylesheet" href="/app.css"><script src="/app.js" defer></script></head>
<body><header><b>xsclaw</b><nav id="nav"></nav></header><main id="main"><p>Loading…</p></main></body></html>
`;

export const STYLE_CSS = `*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#222;background:#f6f6f4}
header{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;padding:.6em 1em;background:#234;color:#fff}
nav{display:flex;flex-wrap:wrap;gap:.2em .7em}nav a{color:#cde;text-decoration:none}nav a.on{color:#fff;text-decoration:underline}
main{max-width:56em;margin:0 auto;padding:1em}h1{font-size:1.3em}pre{white-space:pre-wrap;background:#fff;border:1px solid #ddd;padding:.6em;overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff}td,th{border-bottom:1px solid #e4e4e4;padding:.35em;text-align:left;vertical-align:top}
td small{color:#666;display:block}input,select,textarea,button{font:inherit;padding:.35em;max-width:100%}
label{display:block;margin:.5em 0}label input,label select{display:block;width:100%}button{cursor:pointer}
.err{color:#a00}.ok{color:#070}.msg{background:#fff;border:1px solid #ddd;border-radius:.4em;padding:.5em;margin:.4em 0;white-space:pre-wrap}
.me{background:#e7f0ff}.tool{color:#666;font-size:.9em}#log{min-height:8em}form.row{display:flex;gap:.4em}form.row textarea{flex:1}
`;

export const APP_JS = `"use strict";
const P = location.pathname, M = document.getElementById("main");
const PAGES = [["/", "Status"], ["/chat", "Chat"], ["/settings", "Settings"], ["/sessions", "Sessions"], ["/tools", "Tools"], ["/schedules", "Schedules"], ["/log", "Log"]];
let csrf = "";
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
function add(parent, ...kids) { for (const k of kids) parent.appendChild(k); return parent; }
function clear(title) { M.textContent = ""; add(M, el("h1", title)); }
async function api(path, body) {
  const o = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf }, body: JSON.stringify(body) };
  const r = await fetch(path, o);
  let d = {};
  try { d = await r.json(); } catch (e) { d = {}; }
  if (d.csrf) csrf = d.csrf;
  if (!r.ok) throw new Error(d.error || "HTTP " + r.status);
  return d;
}
function field(name, label, type, value) {
  const l = el("label", label), i = el("input");
  i.name = name; i.type = type || "text"; if (value) i.value = value;
  add(l, i); return l;
}
function note(text, cls) { const p = el("p", text, cls); add(M, p); return p; }
function formOf(f) { const o = {}; for (const e of f.elements) if (e.name) o[e.name] = e.value; return o; }
function nav() {
  const n = document.getElementById("nav");
  for (const [href, name] of PAGES) { const a = el("a", name, href === P ? "on" : ""); a.href = href; add(n, a); }
  const out = el("a", "Log out"); out.href = "#"; out.id = "logout";
  out.onclick = async (e) => { e.preventDefault(); await api("/api/logout", {}).catch(() => {}); location.href = "/"; };
  add(n, out);
}
function login() {
  clear("Log in");
  note("Type web login on the board's serial console (or ask your paired chat) for a one-time code.");
  const f = el("form"); f.id = "login";
  add(f, field("code", "Code", "text"), el("button", "Log in"));
  const msg = el("p", "", "err"); add(M, f, msg);
  f.onsubmit = async (e) => { e.preventDefault(); msg.textContent = "";
    try { await api("/api/login", formOf(f)); location.reload(); } catch (x) { msg.textContent = x.message; } };
}
async function lines(title, path) {
  clear(title);
  const d = await api(path);
  add(M, el("pre", d.lines.join("\\n") || "(nothing)"));
}
async function settings() {
  clear("Settings");
  const d = await api("/api/settings"), t = el("table");
  for (const s of d.settings) {
    const tr = el("tr"), a = el("td"), b = el("td"), f = el("form", undefined, "row");
    add(a, el("b", s.name), el("small", s.description), el("small", s.rule + (s.default !== undefined ? "; default " + s.default : "")));
    const shown = s.secret ? (s.set ? "set" : "not set") : (s.value === undefined ? "not set" : s.value + " (" + s.origin + ")");
    const cur = el("div", shown); cur.className = "cur";
    const i = el("input"); i.name = "value"; i.type = s.secret ? "password" : "text"; i.autocomplete = "off";
    i.placeholder = s.secret ? "new value (never shown)" : (s.value || "");
    const msg = el("small");
    add(f, i, el("button", "Save"));
    f.dataset.name = s.name;
    f.onsubmit = async (e) => { e.preventDefault(); msg.textContent = "";
      try { const r = await api("/api/settings", { name: s.name, value: i.value }); cur.textContent = r.shown; i.value = ""; msg.textContent = "saved"; msg.className = "ok"; }
      catch (x) { msg.textContent = x.message; msg.className = "err"; } };
    add(b, cur, f, msg); add(tr, a, b); add(t, tr);
  }
  add(M, t);
}
function chat() {
  clear("Chat");
  const log = el("div"); log.id = "log";
  const f = el("form", undefined, "row"); f.id = "chat";
  const t = el("textarea"); t.name = "text"; t.rows = 2; t.placeholder = "Ask the agent";
  const stop = el("button", "Stop"); stop.type = "button";
  add(f, t, el("button", "Send"), stop); add(M, log, f);
  const live = new Map();
  const es = new EventSource("/api/chat/events");
  const bubble = (text, cls) => { const b = el("div", text, "msg " + (cls || "")); add(log, b); b.scrollIntoView(); return b; };
  es.addEventListener("delta", (e) => { const d = JSON.parse(e.data); let b = live.get(d.request); if (!b) { b = bubble("", "agent"); live.set(d.request, b); } b.textContent += d.text; });
  es.addEventListener("tool", (e) => bubble("… " + JSON.parse(e.data).name, "tool"));
  es.addEventListener("stage", (e) => bubble("… " + JSON.parse(e.data).text, "tool"));
  es.addEventListener("answer", (e) => { const d = JSON.parse(e.data); const b = live.get(d.request) || bubble("", "agent"); b.textContent = d.text; b.className = "msg agent done"; live.delete(d.request); });
  f.onsubmit = async (e) => { e.preventDefault(); const text = t.value.trim(); if (!text) return; t.value = ""; bubble(text, "me");
    try { await api("/api/chat", { text }); } catch (x) { bubble(x.message, "err"); } };
  stop.onclick = () => api("/api/chat/stop", {}).catch((x) => bubble(x.message, "err"));
}
async function setup() {
  clear("Set up your board");
  const d = await api("/api/setup");
  note("You are on the board's setup network " + d.ap + ". Choose the Wi-Fi it should join and the LLM it should use.");
  const f = el("form"); f.id = "setup";
  const ssid = field("ssid", "Wi-Fi network", "text"), list = el("datalist"); list.id = "nets";
  for (const n of d.networks) { const o = el("option"); o.value = n; add(list, o); }
  ssid.lastChild.setAttribute("list", "nets");
  const prov = el("label", "LLM provider"), sel = el("select"); sel.name = "provider";
  for (const p of d.providers) { const o = el("option", p); o.value = p; add(sel, o); }
  add(prov, sel);
  add(f, ssid, list, field("wifi_password", "Wi-Fi password", "password"), prov,
    field("base_url", "Server URL (custom servers only)", "url"), field("api_key", "API key", "password"), field("model", "Model", "text"),
    field("telegram_token", "Telegram bot token (optional)", "password"), field("qq_app_id", "QQ AppID (optional)", "text"), field("qq_app_secret", "QQ AppSecret (optional)", "password"));
  const test = el("button", "Save and test the LLM"), join = el("button", "Join the network"); test.type = "button"; join.type = "button";
  const out = el("pre", ""); out.id = "setup-out";
  add(f, test, join); add(M, f, out);
  test.onclick = async () => { out.textContent = "testing…";
    try { const r = await api("/api/setup", formOf(f)); out.textContent = r.lines.join("\\n"); } catch (x) { out.textContent = x.message; } };
  join.onclick = async () => {
    try { await api("/api/setup", formOf(f)); const r = await api("/api/setup/join", {}); M.textContent = ""; add(M, el("h1", "Done"), el("p", r.message, "ok")); }
    catch (x) { out.textContent = x.message; } };
}
async function start() {
  let s;
  try { s = await api("/api/session"); } catch (x) { M.textContent = x.message; return; }
  csrf = s.csrf || "";
  if (s.setup) return setup();
  if (!s.logged_in) return login();
  nav();
  try {
    if (P === "/settings") await settings();
    else if (P === "/chat") chat();
    else if (P === "/sessions") await lines("Sessions", "/api/sessions");
    else if (P === "/tools") await lines("Tools", "/api/tools");
    else if (P === "/schedules") await lines("Schedules and automations", "/api/schedules");
    else if (P === "/log") await lines("Log", "/api/log");
    else await lines("Status", "/api/status");
  } catch (x) { note(x.message, "err"); }
}
start();
`;

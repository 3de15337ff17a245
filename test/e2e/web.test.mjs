// The web console in a real browser (issue 30): Debian's chromium driven by
// puppeteer-core against the lin host started with --http 0 on a fresh data
// folder: the setup flow (no Wi-Fi configured: the setup page, the LLM saved and
// tested against the mock LLM, the network joined), a login by a one-time code
// from `web login`, a setting changed, a chat whose reply streams in (and a
// <script> in it shown as text), and a screenshot of every page, kept in
// build/test-output/web/. Then the security tests over plain HTTP: no response
// holds a secret; no cookie, a wrong or replayed CSRF token, or another origin
// changes nothing; brute force on the login is slowed and locked out. One
// browser for the file; skipped with the reason when chromium is missing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { APP_MAP, ROOT } from "../../tools/build.mjs";
import { SANITIZER_ERROR } from "./xs.mjs";
import { startFirmware } from "./firmware.mjs";

const CHROMIUM = "/usr/bin/chromium";
const KEY = "sk-web-e2e-SECRET-0123456789";
const TELEGRAM = "123456:WEBSECRETTOKENabcdefghij";
const WIFI_PASSWORD = "wifi-secret-pass-42";
const SHOTS = join(ROOT, "build", "test-output", "web");
const skip = existsSync(CHROMIUM) ? false : `no ${CHROMIUM}: apt-get install chromium`;

const dir = mkdtempSync(join(tmpdir(), "xsclaw-web-"));
let fw, llm, browser, base, cookie = "", csrf = "", apPassword = "";
const seen = []; // every response body and header block the browser and the tests got

before(async () => {
	if (skip) return;
	mkdirSync(SHOTS, { recursive: true });
	llm = await startMockLLM({ requireKey: KEY });
	fw = startFirmware(["--modules", APP_MAP, "--data", dir, "--http", "0"], "release");
	await fw.until(/web: serving http:\/\/127\.0\.0\.1:(\d+)\//);
	base = `http://127.0.0.1:${/web: serving http:\/\/127\.0\.0\.1:(\d+)\//.exec(fw.printed())[1]}`;
	await fw.until(/setup network xsclaw-\w+, WPA2 password (\S+)/);
	apPassword = /WPA2 password (\S+)/.exec(fw.printed())[1];
	const { default: puppeteer } = await import("puppeteer-core");
	browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
});

after(async () => {
	await browser?.close();
	if (fw) {
		const result = await fw.end();
		assert.equal(result.code, 0, result.stderr.slice(-2000));
		assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
		for (const secret of [KEY, TELEGRAM, WIFI_PASSWORD]) assert.ok(!result.stderr.includes(secret), "no secret in the log");
	}
	await llm?.close();
	rmSync(dir, { recursive: true, force: true });
});

async function newPage() {
	const page = await browser.newPage();
	await page.setViewport({ width: 420, height: 860 }); // a phone
	page.on("response", async (response) => {
		try {
			seen.push(JSON.stringify(response.headers()));
			if (response.request().resourceType() !== "eventsource") seen.push(await response.text());
		} catch { /* a stream, or gone */ }
	});
	return page;
}

const shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

async function login(page) {
	const from = fw.printed().length;
	fw.send("web login");
	await fw.until(/web: login code (\w+)/, { from });
	const code = /web: login code (\w+)/.exec(fw.printed(from))[1];
	await page.goto(`${base}/login`);
	await page.waitForSelector("#login");
	await page.type("#login input[name=code]", code);
	await Promise.all([page.waitForNavigation(), page.click("#login button")]);
	await page.waitForSelector("#nav a");
	const cookies = await page.cookies();
	const session = cookies.find((c) => c.name === "xsclaw_session");
	assert.ok(session.httpOnly, "HttpOnly");
	assert.equal(session.sameSite, "Strict");
	assert.ok(session.expires > Date.now() / 1000, "it expires");
	cookie = `xsclaw_session=${session.value}`;
}

test("from first boot to an answered chat: setup page, LLM tested, network joined, login by code, a setting changed, a streamed reply, every page", { skip, timeout: 120_000 }, async () => {
	const page = await newPage();
	// First boot: no Wi-Fi, so the setup page.
	await page.goto(`${base}/`);
	await page.waitForSelector("#setup");
	await shot(page, "setup");
	await page.type("#setup input[name=ssid]", "home-wifi");
	await page.type("#setup input[name=wifi_password]", WIFI_PASSWORD);
	await page.select("#setup select[name=provider]", "custom");
	await page.type("#setup input[name=base_url]", `${llm.url}/v1`);
	await page.type("#setup input[name=api_key]", KEY);
	await page.type("#setup input[name=model]", "gpt-mock");
	await page.type("#setup input[name=telegram_token]", TELEGRAM);
	llm.script({ type: "text", text: "ready" });
	await page.click("#setup button[type=button]");
	await page.waitForFunction(() => /ready|ok|model/i.test(document.getElementById("setup-out").textContent) && !/testing/.test(document.getElementById("setup-out").textContent), { timeout: 30_000 });
	const tested = await page.$eval("#setup-out", (e) => e.textContent);
	assert.match(tested, /saved llm\.api_key/);
	assert.equal(llm.requests.length, 1, "the LLM was tested");
	const [, joinButton] = await page.$$("#setup button[type=button]");
	await joinButton.click();
	await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Done");
	await shot(page, "setup-done");
	await fw.run("config get wifi.ssid", /wifi\.ssid = home-wifi/);

	// Set up: the setup page is gone, a login is needed.
	const after = await fetch(`${base}/api/setup`);
	assert.equal(after.status, 403);
	await page.goto(`${base}/`);
	await page.waitForSelector("#login");
	await shot(page, "login");
	await login(page);
	await page.waitForFunction(() => /xsclaw/.test(document.querySelector("pre")?.textContent ?? ""));
	await shot(page, "status");

	// A setting changed; the secrets say only set or not set.
	await page.goto(`${base}/settings`);
	await page.waitForSelector("form[data-name='llm.max_tokens']");
	await page.type("form[data-name='llm.max_tokens'] input", "777");
	await page.click("form[data-name='llm.max_tokens'] button");
	await page.waitForFunction(() => /777/.test(document.querySelector("form[data-name='llm.max_tokens']").previousSibling.textContent));
	await fw.run("config get llm.max_tokens", /llm\.max_tokens = 777 \(set\)/);
	const keyShown = await page.$eval("form[data-name='llm.api_key']", (f) => f.previousSibling.textContent);
	assert.equal(keyShown, "set");
	const html = await page.content();
	assert.ok(!html.includes(KEY) && !html.includes(TELEGRAM) && !html.includes(WIFI_PASSWORD), "no secret on the settings page");
	await shot(page, "settings");

	// The chat: a streamed reply, with markup in it shown as text.
	await page.goto(`${base}/chat`);
	await page.waitForSelector("#chat textarea");
	const answer = "Hello <script>window.pwned=1</script> <b>owner</b>, streamed in pieces";
	llm.script({ type: "text", text: answer, chunk: 8, fault: "trickle", chunkBytes: 256, intervalMs: 120 });
	await page.type("#chat textarea", "hi <script>window.pwned=2</script>");
	await page.click("#chat button");
	await page.waitForFunction((text) => [...document.querySelectorAll(".msg.done")].some((m) => m.textContent === text), { timeout: 30_000 }, answer);
	assert.equal(await page.evaluate(() => window.pwned), undefined, "no script ran");
	assert.equal(await page.evaluate(() => document.querySelectorAll("#log script, #log b").length), 0, "markup is text");
	await shot(page, "chat");

	for (const name of ["sessions", "tools", "schedules", "log"]) {
		await page.goto(`${base}/${name}`);
		await page.waitForSelector("main pre");
		await shot(page, name);
	}
	await page.close();
	assert.ok(existsSync(join(SHOTS, "chat.png")));
});

// ---- security, over plain HTTP with the session the browser got ----

async function call(path, { method = "GET", body, headers = {} } = {}) {
	const response = await fetch(`${base}${path}`, {
		method, headers: { ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...headers },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	seen.push(JSON.stringify([...response.headers]), text);
	let json = {};
	try { json = JSON.parse(text); } catch { /* a page */ }
	return { status: response.status, json, text };
}
const ORIGIN = () => ({ Origin: base, Host: new URL(base).host });
const change = (path, body, extra = {}) => call(path, { method: "POST", body, headers: { Cookie: cookie, Origin: base, "X-CSRF-Token": csrf, ...extra } });

test("changes need the session, the page's origin and the current CSRF token; a replayed token changes nothing", { skip, timeout: 60_000 }, async () => {
	const session = await call("/api/session", { headers: { Cookie: cookie } });
	assert.equal(session.json.logged_in, true);
	csrf = session.json.csrf;
	const value = async () => (await fw.run("config get llm.max_tokens", /llm\.max_tokens = \d+/)).match(/= (\d+)/)[1];
	const before = await value();
	const attempts = [
		["no cookie", call("/api/settings", { method: "POST", body: { name: "llm.max_tokens", value: "11" }, headers: { Origin: base, "X-CSRF-Token": csrf } }), 401],
		["a wrong token", change("/api/settings", { name: "llm.max_tokens", value: "12" }, { "X-CSRF-Token": "0".repeat(32) }), 403],
		["no token", change("/api/settings", { name: "llm.max_tokens", value: "13" }, { "X-CSRF-Token": "" }), 403],
		["another origin", change("/api/settings", { name: "llm.max_tokens", value: "14" }, { Origin: "http://evil.example" }), 403],
		["a cross-site fetch", change("/api/settings", { name: "llm.max_tokens", value: "15" }, { "Sec-Fetch-Site": "cross-site" }), 403],
		["no origin", call("/api/settings", { method: "POST", body: { name: "llm.max_tokens", value: "16" }, headers: { Cookie: cookie, "X-CSRF-Token": csrf } }), 403],
		["a form post", call("/api/settings", { method: "POST", headers: { Cookie: cookie, Origin: base, "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded" } }), 400],
	];
	for (const [what, attempt, status] of attempts) assert.equal((await attempt).status, status, what);
	assert.equal(await value(), before, "nothing changed");
	const ok = await change("/api/settings", { name: "llm.max_tokens", value: "640" });
	assert.equal(ok.status, 200);
	const replay = await change("/api/settings", { name: "llm.max_tokens", value: "641" });
	assert.equal(replay.status, 403, "the token used once is dead");
	assert.equal(await value(), "640");
	csrf = ok.json.csrf;
	assert.equal((await change("/api/settings", { name: "llm.max_tokens", value: "642" })).status, 200, "the next token works");
	const reads = await call("/api/settings");
	assert.equal(reads.status, 401, "reading needs the session too");
});

test("the reply streams as server-sent events before the answer, as the owner's chat", { skip, timeout: 60_000 }, async () => {
	csrf = (await call("/api/session", { headers: { Cookie: cookie } })).json.csrf;
	const controller = new AbortController();
	const events = await fetch(`${base}/api/chat/events`, { headers: { Cookie: cookie }, signal: controller.signal });
	assert.equal(events.headers.get("content-type"), "text/event-stream; charset=utf-8");
	const reader = events.body.getReader();
	let text = "";
	// Sent slowly (a piece every 150 ms), so the agent's deltas cross one by one (they are joined within 100 ms).
	llm.script({ type: "text", text: "one two three four five six", chunk: 3, fault: "trickle", chunkBytes: 128, intervalMs: 150 });
	const sent = await change("/api/chat", { text: "count" });
	assert.equal(sent.status, 200);
	const deadline = Date.now() + 20_000;
	while (!/event: answer/.test(text) && Date.now() < deadline) text += new TextDecoder().decode((await reader.read()).value ?? new Uint8Array());
	controller.abort();
	const deltas = text.split("event: delta").length - 1;
	assert.ok(deltas >= 3, `streamed in pieces (${deltas} deltas)`);
	assert.ok(text.indexOf("event: delta") < text.indexOf("event: answer"), "pieces before the answer");
	assert.match(text, /one two three four five six/);
	const unauth = await fetch(`${base}/api/chat/events`);
	assert.equal(unauth.status, 401);
});

test("login by brute force is slowed and locked out; the right code then fails too", { skip, timeout: 60_000 }, async () => {
	const from = fw.printed().length;
	fw.send("web login");
	await fw.until(/web: login code (\w+)/, { from });
	const code = /web: login code (\w+)/.exec(fw.printed(from))[1];
	const started = Date.now();
	const tries = await Promise.all(Array.from({ length: 6 }, (_, i) => call("/api/login", { method: "POST", body: { code: `WRONG00${i}` }, headers: ORIGIN() })));
	assert.ok(Date.now() - started >= 900, "wrong codes are answered slowly");
	assert.ok(tries.every((t) => t.status === 401 || t.status === 429));
	assert.ok(tries.some((t) => t.status === 429), "locked out");
	const right = await call("/api/login", { method: "POST", body: { code }, headers: ORIGIN() });
	assert.equal(right.status, 429, "even the right code is refused while locked");
	const other = await call("/api/login", { method: "POST", body: { code }, headers: { Origin: "http://evil.example" } });
	assert.equal(other.status, 403);
});

test("no response the browser or these tests got holds a secret, nor does any page or API asked without a session", { skip }, async () => {
	for (const path of ["/", "/login", "/setup", "/app.js", "/app.css", "/api/session", "/api/status", "/api/settings", "/api/tools", "/api/sessions", "/api/schedules", "/api/log", "/api/setup", "/nothing", "/../etc"]) {
		await call(path);
		await call(path, { headers: { Cookie: cookie } });
	}
	const all = seen.join("\n");
	assert.ok(seen.length > 40, `responses checked (${seen.length})`);
	for (const secret of [KEY, TELEGRAM, WIFI_PASSWORD, apPassword]) {
		assert.ok(!all.includes(secret), `no response holds ${secret.slice(0, 6)}…`);
		assert.ok(!all.includes(secret.slice(-8)), "nor its end");
	}
});

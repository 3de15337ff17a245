// The web console's pieces inside XS (issue 30): the login codes, sessions and
// CSRF tokens of channels/web/auth (one code at a time, once; lockout after
// WEB_LOGIN_FAILURES_MAX wrong ones; a token dies once used; expiry), the origin
// check, and the page's bytes within WEB_ASSETS_MAX_BYTES.
import { test, assert } from "testing";
import { WEB_ASSETS_MAX_BYTES, WEB_LOGIN_FAILURES_MAX, WEB_LOGIN_LOCKOUT_MS, WEB_SESSION_TTL_MS, WEB_SESSIONS_MAX } from "budgets";
import { WebAuth, checkOrigin, cookieValue, sameText } from "channels/web/auth";
import { APP_JS, PAGE_HTML, STYLE_CSS } from "channels/web/assets";
import { encodeUtf8 } from "net/utf8";
import type { HttpRequest } from "httpd/types";

function request(headers: Record<string, string>): HttpRequest {
	const list = Object.keys(headers).map((name) => [name.toLowerCase(), headers[name]] as const);
	return {
		method: "POST", path: "/api/x", query: "", headers: list, body: new Uint8Array(0), remote: "127.0.0.1",
		header: (name) => list.find(([n]) => n === name.toLowerCase())?.[1],
	};
}

test("a login code works once; a wrong one does not; the cookie is HttpOnly, SameSite=Strict and expires", () => {
	let now = 1000;
	const auth = new WebAuth(() => now);
	const { code } = auth.issueCode();
	assert.ok("status" in auth.login("WRONGCODE"));
	const session = auth.login(code.toLowerCase());
	if ("status" in session) throw new Error(session.error);
	assert.match(auth.cookie(session), /^xsclaw_session=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/);
	assert.ok("status" in auth.login(code), "used once");
	const cookie = `a=b; xsclaw_session=${session.token}`;
	assert.equal(auth.session(request({ cookie })), session);
	now += WEB_SESSION_TTL_MS;
	assert.equal(auth.session(request({ cookie })), undefined, "expired");
});

test("too many wrong codes void the code and lock logins out for a while", () => {
	let now = 0;
	const auth = new WebAuth(() => now);
	const { code } = auth.issueCode();
	let last: unknown;
	for (let i = 0; i < WEB_LOGIN_FAILURES_MAX; i++) last = auth.login(`BAD${i}`);
	assert.equal((last as { status: number }).status, 429);
	assert.equal((auth.login(code) as { status: number }).status, 429, "locked");
	now += WEB_LOGIN_LOCKOUT_MS;
	assert.equal((auth.login(code) as { status: number }).status, 401, "the code is void");
	const fresh = auth.issueCode();
	assert.ok(!("status" in auth.login(fresh.code)));
});

test("a change needs the session, the origin and the current token, which then dies; the oldest session goes past the limit", () => {
	const auth = new WebAuth(() => 0);
	const session = auth.login(auth.issueCode().code);
	if ("status" in session) throw new Error(session.error);
	const headers = { cookie: `xsclaw_session=${session.token}`, host: "board", origin: "http://board", "x-csrf-token": session.csrf };
	assert.equal((auth.change(request({ ...headers, origin: "http://evil" })) as { status: number }).status, 403);
	assert.equal((auth.change(request({ ...headers, "sec-fetch-site": "cross-site" })) as { status: number }).status, 403);
	assert.equal((auth.change(request({ ...headers, "x-csrf-token": "x" })) as { status: number }).status, 403);
	assert.equal(auth.change(request(headers)), session);
	assert.equal((auth.change(request(headers)) as { status: number }).status, 403, "replayed");
	for (let i = 0; i < WEB_SESSIONS_MAX; i++) auth.login(auth.issueCode().code);
	assert.equal(auth.session(request(headers)), undefined, "the oldest was logged out");
	assert.equal(checkOrigin(request({ host: "a:1", origin: "http://a:1" })), undefined);
	assert.equal(cookieValue(" x=1 ;y=2", "y"), "2");
	assert.ok(sameText("abc", "abc") && !sameText("abc", "abd") && !sameText("ab", "abc"));
});

test("the page, its style and its script fit the budget", () => {
	const bytes = encodeUtf8(PAGE_HTML).length + encodeUtf8(STYLE_CSS).length + encodeUtf8(APP_JS).length;
	assert.ok(bytes <= WEB_ASSETS_MAX_BYTES, `${bytes} bytes`);
	assert.ok(!/<script>|\sstyle=|\son\w+=/.test(PAGE_HTML), "no inline script or style");
	assert.ok(!/innerHTML|insertAdjacentHTML|document\.write/.test(APP_JS), "text only, never markup");
});

// The HTTP server's request-head parser (httpd/parser) and route table
// (httpd/routes), inside XS; the fuzz target of the parser is the last test:
// seeded damaged heads must end in a head or a 4xx/5xx answer, never a throw.
import { test, assert } from "testing";
import { generator, mutate, randomBytes, seedFor } from "test/fuzz";
import { WEB_HEAD_MAX_BYTES, WEB_HEADERS_MAX, WEB_TARGET_MAX_CHARS } from "budgets";
import { decodePath, headEnd, parseHead, type HeadError, type RequestHead } from "httpd/parser";
import { HttpRoutes } from "httpd/routes";
import { encodeUtf8 } from "net/utf8";

/** The first seed of every loop here (--seed N replays another run). */
const SEED = seedFor(1);

function parse(text: string): RequestHead | HeadError {
	const bytes = encodeUtf8(text);
	const end = headEnd(bytes, 0, bytes.length);
	assert.ok(end > 0, `a head end in ${JSON.stringify(text)}`);
	return parseHead(bytes, end);
}

function head(text: string): RequestHead {
	const result = parse(text);
	if ("status" in result) throw new Error(`refused: ${result.status} ${result.error}`);
	return result;
}

function status(text: string): number {
	const result = parse(text);
	return "status" in result ? result.status : 0;
}

test("a GET with a query, headers in any case, kept alive", () => {
	const h = head("GET /api/status?x=1&y=%20 HTTP/1.1\r\nHost: board\r\nX-Thing:  two words  \r\nCOOKIE: a=b\r\n\r\n");
	assert.equal(h.method, "GET");
	assert.equal(h.path, "/api/status");
	assert.equal(h.query, "x=1&y=%20");
	assert.equal(h.version, 11);
	assert.deepEqual(h.headers, [["host", "board"], ["x-thing", "two words"], ["cookie", "a=b"]]);
	assert.equal(h.contentLength, 0);
	assert.equal(h.keepAlive, true);
});

test("Connection: close, HTTP/1.0 and its keep-alive", () => {
	assert.equal(head("GET / HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n").keepAlive, false);
	assert.equal(head("GET / HTTP/1.0\r\n\r\n").keepAlive, false);
	assert.equal(head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive, true);
	assert.equal(head("GET / HTTP/1.1\r\nHost: b\r\nConnection: keep-alive, Upgrade\r\n\r\n").keepAlive, true);
});

test("a body's length: digits only, one value, no Transfer-Encoding", () => {
	assert.equal(head("POST /x HTTP/1.1\r\nHost: b\r\nContent-Length: 12\r\n\r\n").contentLength, 12);
	assert.equal(head("POST /x HTTP/1.1\r\nHost: b\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n").contentLength, 5);
	assert.equal(status("POST /x HTTP/1.1\r\nHost: b\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"), 400);
	assert.equal(status("POST /x HTTP/1.1\r\nHost: b\r\nContent-Length: -1\r\n\r\n"), 400);
	assert.equal(status("POST /x HTTP/1.1\r\nHost: b\r\nContent-Length: 0x10\r\n\r\n"), 400);
	assert.equal(status("POST /x HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\n"), 501);
});

test("malformed request lines, versions and header lines are refused with their status", () => {
	assert.equal(status("GET  / HTTP/1.1\r\nHost: b\r\n\r\n"), 400);
	assert.equal(status("GET / HTTP/2.0\r\nHost: b\r\n\r\n"), 505);
	assert.equal(status("GET / HTTP/1.2\r\nHost: b\r\n\r\n"), 505);
	assert.equal(status("GET / FTP/1.1\r\nHost: b\r\n\r\n"), 400);
	assert.equal(status("G(T / HTTP/1.1\r\nHost: b\r\n\r\n"), 400);
	assert.equal(status("GET http://other/ HTTP/1.1\r\nHost: b\r\n\r\n"), 400);
	assert.equal(status("GET / HTTP/1.1\r\n\r\n"), 400, "no Host");
	assert.equal(status("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400, "two Hosts");
	assert.equal(status("GET / HTTP/1.1\r\nHost: b\r\n folded\r\n\r\n"), 400);
	assert.equal(status("GET / HTTP/1.1\r\nHost: b\r\nBad Name: x\r\n\r\n"), 400);
	assert.equal(status("GET / HTTP/1.1\r\nHost: b\r\nX: a\u0001b\r\n\r\n"), 400);
	assert.equal(status("GET / HTTP/1.1\r\nHost: b\r\nX: a\nY: b\r\n\r\n"), 400, "a bare LF");
});

test("the path is decoded and may not climb, hold a NUL or a backslash", () => {
	assert.equal(head("GET /a%20b/%C3%A9 HTTP/1.1\r\nHost: b\r\n\r\n").path, "/a b/é");
	for (const bad of ["/../etc/passwd", "/a/..", "/a/./b", "/%2e%2e/x", "/a/%2E%2E/%2e%2E/b", "/a%00b", "/a%5c..%5cb", "/a\\b", "/%zz", "/%C3", "/%FF", "/%ED%A0%80"])
		assert.equal(typeof decodePath(bad), "object", bad);
	assert.equal(decodePath("/a..b/.c/"), "/a..b/.c/");
});

test("the budgets: target length, header count, head size", () => {
	assert.equal(status(`GET /${"a".repeat(WEB_TARGET_MAX_CHARS)} HTTP/1.1\r\nHost: b\r\n\r\n`), 414);
	let many = "GET / HTTP/1.1\r\nHost: b\r\n";
	for (let i = 0; i < WEB_HEADERS_MAX; i++) many += `X-${i}: y\r\n`;
	assert.equal(status(`${many}\r\n`), 431);
	const big = encodeUtf8(`GET / HTTP/1.1\r\nHost: b\r\nX: ${"a".repeat(WEB_HEAD_MAX_BYTES)}\r\n\r\n`);
	assert.equal((parseHead(big, big.length) as HeadError).status, 431);
});

test("headEnd finds the blank line from where the last search stopped", () => {
	const bytes = encodeUtf8("GET / HTTP/1.1\r\nHost: b\r\n\r\nrest");
	assert.equal(headEnd(bytes, 0, 10), -1);
	assert.equal(headEnd(bytes, 20, bytes.length), bytes.length - 4);
});

test("routes: exact before prefix, longer prefix first, 405's methods, duplicates and bad routes refused", () => {
	const routes = new HttpRoutes();
	const handle = () => {};
	const root = { method: "GET", path: "/", handle };
	const statics = { method: "GET", path: "/static/*", handle };
	const deep = { method: "GET", path: "/static/js/*", handle };
	const exact = { method: "GET", path: "/static/app.css", handle };
	const post = { method: "POST", path: "/api/chat", handle };
	for (const route of [root, statics, deep, exact, post]) routes.add(route);
	assert.equal(routes.match("GET", "/").route, root);
	assert.equal(routes.match("GET", "/static/x.png").route, statics);
	assert.equal(routes.match("GET", "/static/js/a.js").route, deep);
	assert.equal(routes.match("GET", "/static/app.css").route, exact);
	assert.equal(routes.match("GET", "/static/").route, undefined, "a prefix needs something after it");
	assert.deepEqual(routes.match("GET", "/api/chat").allowed, ["POST"]);
	assert.equal(routes.match("GET", "/nothing").allowed, undefined);
	assert.throws(() => routes.add({ method: "POST", path: "/api/chat", handle }), /served already/);
	assert.throws(() => routes.add({ method: "get", path: "/x", handle }), /upper-case/);
	assert.throws(() => routes.add({ method: "GET", path: "x", handle }), /starts with \//);
	assert.throws(() => routes.add({ method: "GET", path: "/a*", handle }), /starts with \//);
	assert.throws(() => routes.add({ method: "POST", path: "/big", bodyMaxBytes: 1 << 30, handle }), /bodyMaxBytes/);
	const remove = routes.add({ method: "PUT", path: "/api/chat", handle });
	assert.deepEqual(routes.match("GET", "/api/chat").allowed, ["POST", "PUT"]);
	remove();
	assert.deepEqual(routes.match("GET", "/api/chat").allowed, ["POST"]);
});

const VALID = [
	"GET /api/status?x=1 HTTP/1.1\r\nHost: xsclaw.local\r\nCookie: s=abc\r\nAccept: */*\r\n\r\n",
	"POST /api/settings HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 20\r\nX-CSRF-Token: t\r\nOrigin: http://127.0.0.1:8080\r\n\r\n",
	"GET /a%20b/%C3%A9 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
];

// The fuzz target: damaged heads end in a head or an answer with a 4xx/5xx status, never a throw.
test("fuzz: damaged and random heads end in a head or an error status", () => {
	for (let seed = SEED; seed < SEED + 1500; seed++) {
		const rand = generator(seed);
		const bytes = seed % 5 === 0 ? randomBytes(rand, 600) : mutate(encodeUtf8(VALID[seed % VALID.length]), rand);
		const end = headEnd(bytes, 0, bytes.length);
		const result = parseHead(bytes, end < 0 ? bytes.length : end);
		if ("status" in result) {
			assert.ok(result.status >= 400 && result.status < 600, `seed ${seed}: status ${result.status}`);
			assert.equal(typeof result.error, "string");
		} else {
			assert.ok(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(result.method), `seed ${seed}: method`);
			assert.equal(result.path.charCodeAt(0), 0x2f, `seed ${seed}: path`);
			assert.ok(!/(^|\/)\.\.?(\/|$)/.test(result.path), `seed ${seed}: no . or .. segment`);
			assert.ok(result.contentLength >= 0 && Number.isInteger(result.contentLength), `seed ${seed}: length`);
		}
	}
});

// A fuzz target for MCP's JSON-RPC reader (mcp/jsonrpc readMessage, which both
// the board's MCP server and the client read every message with) and the
// client's reply reader (mcp/client ReplyReader: a JSON body or an event
// stream, split anywhere). Seeded and bounded as test/unit/agent_port_fuzz is
// (test/fuzz: --seed, --fuzz-iterations, the one generator): valid
// messages of every kind with one to three parts changed (a field replaced by a
// hostile value, removed or added), their bytes damaged, and random bytes, deep
// nesting and oversized input. The rule: a message comes out whose every field
// the reader checked, or a JsonRpcError with the specification's code (-32700
// not JSON, -32600 not a JSON-RPC message) and a sentence, or (the reply
// reader) an HttpError; never another exception, a crash or a hang. More than a
// quarter of the changed messages are refused, so the changes reach the checks.
import { test, assert } from "testing";
import { MCP_ERROR_MESSAGE_MAX_CHARS, MCP_JSON_DEPTH_MAX, MCP_MESSAGE_MAX_BYTES } from "budgets";
import { INVALID_REQUEST, JsonRpcError, PARSE_ERROR, readMessage, type JsonRpcMessage } from "mcp/jsonrpc";
import { ReplyReader } from "mcp/client";
import { HttpError, type HttpResponse } from "net/types";
import { encodeUtf8 } from "net/utf8";
import { generator, iterationsFor, mutate, randomBytes, seedFor, type Random } from "test/fuzz";

/** The first seed of every loop here (--seed N replays another run; --fuzz-iterations N hunts longer). */
const SEED = seedFor(0x3C9A1);
const ITERATIONS = iterationsFor(2000);
const REPLIES = Math.max(1, Math.round(ITERATIONS / 8));

const VALID = [
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}',
	'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}',
	'{"jsonrpc":"2.0","id":"a-1","result":{"content":[{"type":"text","text":"héllo 🌡"}],"isError":false}}',
	'{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params","data":{"field":"a"}}}',
	'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
	'{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}],"nextCursor":"2"}}',
];

function read(text: string): JsonRpcMessage {
	return readMessage(encodeUtf8(text));
}

function code(fn: () => unknown): number {
	try {
		fn();
	} catch (error) {
		if (error instanceof JsonRpcError) return error.code;
		throw error;
	}
	return 0;
}

test("valid messages are read as their kind, with their id, method and fields", () => {
	assert.deepEqual(VALID.map((text) => read(text).kind), ["request", "notification", "result", "error", "error", "result"]);
	const request = read(VALID[0]);
	assert.ok(request.kind === "request" && request.id === 1 && request.method === "initialize" && request.params?.protocolVersion === "2025-11-25");
	const result = read(VALID[2]);
	assert.ok(result.kind === "result" && result.id === "a-1");
	assert.equal(JSON.stringify(result.kind === "result" ? result.result.content : null), '[{"type":"text","text":"héllo 🌡"}]');
	const error = read(VALID[3]);
	assert.ok(error.kind === "error" && error.code === -32602 && error.message === "Invalid params");
});

test("what is not JSON is -32700; JSON that is not one JSON-RPC 2.0 message is -32600, with the id when it has one", () => {
	for (const text of ["", "{", '{"jsonrpc":"2.0",}', "nul", '{"a":1} {"b":2}', "\u00ff"]) assert.equal(code(() => read(text)), PARSE_ERROR, text);
	for (const text of [
		"[]", '[{"jsonrpc":"2.0","method":"ping","id":1}]', "1", '"x"', "{}", '{"jsonrpc":"1.0","id":1,"method":"ping"}',
		'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', '{"jsonrpc":"2.0","id":{},"method":"ping"}', '{"jsonrpc":"2.0","id":1,"method":""}',
		'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}', '{"jsonrpc":"2.0","id":1}', '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}',
		'{"jsonrpc":"2.0","id":1,"result":[]}', '{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"y"}}', '{"jsonrpc":"2.0","result":{}}',
		'{"jsonrpc":"2.0","id":null,"method":"ping"}', '{"jsonrpc":"2.0","id":null,"result":{}}',
	]) assert.equal(code(() => read(text)), INVALID_REQUEST, text);
	try {
		read('{"jsonrpc":"2.0","id":"q9","method":7}');
		assert.fail("a method that is not a string was read");
	} catch (error) {
		assert.ok(error instanceof JsonRpcError && error.id === "q9", String(error));
	}
});

test("nesting past MCP_JSON_DEPTH_MAX and messages past MCP_MESSAGE_MAX_BYTES are refused before JSON.parse", () => {
	const deep = "[".repeat(50_000) + "]".repeat(50_000);
	assert.equal(code(() => read(deep)), PARSE_ERROR);
	const justDeep = `{"jsonrpc":"2.0","id":1,"result":{"a":${"[".repeat(MCP_JSON_DEPTH_MAX - 2)}${"]".repeat(MCP_JSON_DEPTH_MAX - 2)}}}`;
	assert.equal(read(justDeep).kind, "result");
	const big = `{"jsonrpc":"2.0","id":1,"result":{"t":"${"x".repeat(MCP_MESSAGE_MAX_BYTES)}"}}`;
	assert.equal(code(() => read(big)), INVALID_REQUEST);
});

/** Values a broken or hostile peer could put anywhere (as JSON: NaN and Infinity become null, a lone surrogate an escape). */
const HOSTILE: readonly unknown[] = [
	null, true, false, 0, -1, 0.5, -0, 1e300, 2 ** 53, -(2 ** 31), "", "\ud800", "2.0", "1.0", "ping", "initialize", "tools/call",
	[], {}, [null], [{ jsonrpc: "2.0", id: 1, method: "ping" }], { code: -32600, message: "x" }, { code: 1.5, message: "x" }, "__proto__",
	{ jsonrpc: "2.0" }, JSON.parse('{"__proto__": {"polluted": 1}}'), "x".repeat(MCP_ERROR_MESSAGE_MAX_CHARS + 5),
];

/** A hostile value made for this step: a fixed one, a text near the message bound (when big, at most one a message: the heap holds a few copies), or nesting near the depth bound. */
function hostile(rand: Random, big: boolean): unknown {
	const kind = rand(32);
	if (kind === 0 && big) return "y".repeat(MCP_MESSAGE_MAX_BYTES - 100 + rand(200));
	if (kind <= 1) {
		let value: unknown = 1;
		for (let i = MCP_JSON_DEPTH_MAX - 4 + rand(8); i > 0; i--) value = rand(2) ? [value] : { a: value };
		return value;
	}
	return copy(rand.pick(HOSTILE));
}

function copy(value: unknown): unknown {
	return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** Every object or array inside value (itself too), for picking where to change: walked with a list, not recursion (a nesting near MCP_JSON_DEPTH_MAX would overflow the device's 1024-slot stack). */
function containers(value: unknown): Array<Record<string, unknown>> {
	const found: Array<Record<string, unknown>> = [];
	const todo: unknown[] = [value];
	while (todo.length) {
		const next = todo.pop();
		if (!next || typeof next !== "object") continue;
		found.push(next as Record<string, unknown>);
		for (const child of Object.values(next as object)) todo.push(child);
	}
	return found;
}

/** The message with one to three changes, each in a random container: a field replaced, removed or added. */
function change(message: unknown, rand: Random): unknown {
	const out = copy(message);
	const changes = 1 + rand(3);
	let big = true;
	for (let c = 0; c < changes; c++) {
		const target = rand.pick(containers(out));
		const keys = Object.keys(target);
		const key = keys.length && rand(5) ? rand.pick(keys) : rand.pick(["jsonrpc", "id", "method", "params", "result", "error", "code", "message", "0"]);
		if (rand(6) === 0) delete target[key];
		else {
			target[key] = hostile(rand, big);
			big = big && !(typeof target[key] === "string" && (target[key] as string).length > MCP_ERROR_MESSAGE_MAX_CHARS * 2);
		}
	}
	return out;
}

const isId = (id: unknown) => typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
const isObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);

/** What the reader promises of a message it gives: every field of its kind checked. */
function checkRead(message: JsonRpcMessage, where: string): void {
	switch (message.kind) {
		case "request":
		case "notification":
			if (message.kind === "request") assert.ok(isId(message.id), `${where}: a request's id`);
			assert.ok(typeof message.method === "string" && message.method.length > 0, `${where}: the method`);
			assert.ok(message.params === undefined || isObject(message.params), `${where}: params`);
			return;
		case "result":
			assert.ok(isId(message.id) && isObject(message.result), `${where}: a result`);
			return;
		case "error":
			assert.ok(message.id === null || isId(message.id), `${where}: an error's id`);
			assert.ok(Number.isInteger(message.code) && typeof message.message === "string" && message.message.length <= MCP_ERROR_MESSAGE_MAX_CHARS, `${where}: an error's code and message`);
			return;
		default:
			assert.fail(`${where}: a message of no kind: ${JSON.stringify(message).slice(0, 200)}`);
	}
}

/** readMessage on bytes: true when refused with the specification's code and a sentence; fails the test on anything else. */
function refused(bytes: Uint8Array, where: string): boolean {
	try {
		checkRead(readMessage(bytes), where);
		return false;
	} catch (error) {
		if (!(error instanceof JsonRpcError)) throw new Error(`${where}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
		assert.ok(error.code === PARSE_ERROR || error.code === INVALID_REQUEST, `${where}: code ${error.code}`);
		assert.ok(/^(parse error|invalid request): |^the message is \d+ bytes/.test(error.message), `${where}: a sentence: ${error.message}`);
		assert.ok(error.id === null || isId(error.id), `${where}: the error's id`);
		return true;
	}
}

const MESSAGES: unknown[] = VALID.map((text) => JSON.parse(text));

test(`fuzz: ${ITERATIONS} valid messages with one to three fields changed are read, every field checked, or refused with -32700 / -32600 (seed ${SEED})`, () => {
	const rand = generator(SEED);
	let count = 0;
	for (let i = 0; i < ITERATIONS; i++) {
		const message = change(rand.pick(MESSAGES), rand);
		if (refused(encodeUtf8(JSON.stringify(message) ?? ""), `seed ${SEED} step ${i}`)) count++;
	}
	assert.ok(count > ITERATIONS / 4, `${count} of ${ITERATIONS} changed messages refused: the changes reach the checks`);
});

test(`fuzz: ${ITERATIONS} damaged and random byte strings are read or refused with -32700 / -32600 (seed ${SEED + 1})`, () => {
	const rand = generator(SEED + 1);
	let count = 0;
	for (let i = 0; i < ITERATIONS; i++) {
		const base = encodeUtf8(JSON.stringify(change(rand.pick(MESSAGES), rand)) ?? "");
		const bytes = i % 5 === 0 ? randomBytes(rand, 300) : mutate(rand(2) ? base : encodeUtf8(rand.pick(VALID)), rand);
		if (refused(bytes, `seed ${SEED + 1} step ${i}`)) count++;
	}
	assert.ok(count > ITERATIONS / 4, `${count} of ${ITERATIONS} damaged messages refused`);
});

const RESPONSE_JSON = { status: 200, headers: { "content-type": "application/json" } } as unknown as HttpResponse;
const RESPONSE_SSE = { status: 200, headers: { "content-type": "text/event-stream" } } as unknown as HttpResponse;

/** Feeds a reply in pieces cut by rand; the messages read, or the error. */
function feed(bytes: Uint8Array, rand: Random, response: HttpResponse): { messages: JsonRpcMessage[]; error?: unknown } {
	const messages: JsonRpcMessage[] = [];
	const reader = new ReplyReader((message) => messages.push(message));
	try {
		let at = 0;
		while (at < bytes.length) {
			const next = Math.min(bytes.length, at + 1 + rand(64));
			reader.chunk(bytes.subarray(at, next));
			at = next;
		}
		reader.end(response);
		return { messages };
	} catch (error) {
		return { messages, error };
	}
}

test(`the reply reader reads a JSON body and an event stream split anywhere; ${REPLIES} damaged replies end in messages or a JsonRpcError or HttpError (seed ${SEED + 2})`, () => {
	const stream = `: hello\n\nevent: message\nid: 1\ndata: ${VALID[1]}\n\nevent: message\r\ndata: ${VALID[2]}\r\n\r\n`;
	const rand = generator(SEED + 2);
	for (let i = 0; i < 40; i++) {
		const json = feed(encodeUtf8(`  ${VALID[2]}`), rand, RESPONSE_JSON);
		assert.ok(!json.error && json.messages.length === 1 && json.messages[0].kind === "result", `step ${i}: ${String(json.error)}`);
		const sse = feed(encodeUtf8(stream), rand, RESPONSE_SSE);
		assert.deepEqual(sse.messages.map((m) => m.kind), ["notification", "result"], `step ${i}: ${String(sse.error)}`);
	}
	assert.ok(feed(encodeUtf8(VALID[2]), rand, RESPONSE_SSE).error instanceof HttpError, "a JSON body that says it is a stream is refused");
	for (let i = 0; i < REPLIES; i++) {
		const bytes = i % 4 === 0 ? randomBytes(rand, 400) : mutate(encodeUtf8(i % 2 ? stream : rand.pick(VALID)), rand);
		const { messages, error } = feed(bytes, rand, i % 2 ? RESPONSE_SSE : RESPONSE_JSON);
		if (error !== undefined && !(error instanceof JsonRpcError) && !(error instanceof HttpError)) throw new Error(`seed ${SEED + 2} step ${i}: ${String(error)}`);
		messages.forEach((message) => checkRead(message, `seed ${SEED + 2} step ${i}`));
	}
});

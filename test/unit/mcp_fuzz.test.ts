// The JSON-RPC reader of MCP (mcp/jsonrpc readMessage) and the client's reply
// reader (mcp/client ReplyReader: a JSON body or an event stream, split anywhere),
// on valid messages and on seeded mutations, random bytes, deep nesting and
// oversized input. The rule: a message comes out, or a JsonRpcError with the
// specification's code (-32700 not JSON, -32600 not a JSON-RPC message), or (the
// reply reader) an HttpError; never another exception, a crash or a hang.
import { test, assert } from "testing";
import { generator, mutate, randomBytes, seedFor } from "test/fuzz";
import { MCP_JSON_DEPTH_MAX, MCP_MESSAGE_MAX_BYTES } from "budgets";
import { INVALID_REQUEST, JsonRpcError, PARSE_ERROR, readMessage, type JsonRpcMessage } from "mcp/jsonrpc";
import { ReplyReader } from "mcp/client";
import { HttpError, type HttpResponse } from "net/types";
import { encodeUtf8 } from "net/utf8";

/** The first seed of every loop here (--seed N replays another run). */
const SEED = seedFor(1);

const SEEDS = 400;

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

test(`fuzz: ${SEEDS} seeds of mutated and random messages end in a message or a JsonRpcError`, () => {
	for (let seed = SEED; seed < SEED + SEEDS; seed++) {
		const rand = generator(seed);
		const bytes = seed % 5 === 0 ? randomBytes(rand, 300) : mutate(encodeUtf8(VALID[rand(VALID.length)]), rand);
		try {
			const message = readMessage(bytes);
			assert.ok(["request", "notification", "result", "error"].includes(message.kind), `seed ${seed}`);
		} catch (error) {
			if (!(error instanceof JsonRpcError) || (error.code !== PARSE_ERROR && error.code !== INVALID_REQUEST)) throw new Error(`seed ${seed}: ${String(error)}`);
		}
	}
});

const RESPONSE_JSON = { status: 200, headers: { "content-type": "application/json" } } as unknown as HttpResponse;
const RESPONSE_SSE = { status: 200, headers: { "content-type": "text/event-stream" } } as unknown as HttpResponse;

/** Feeds a reply in pieces cut by rand; the messages read, or the error. */
function feed(bytes: Uint8Array, rand: (n: number) => number, response: HttpResponse): { messages: JsonRpcMessage[]; error?: unknown } {
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

test("the reply reader reads a JSON body and an event stream split anywhere; fuzzed replies end in messages or a JsonRpcError or HttpError", () => {
	const stream = `: hello\n\nevent: message\nid: 1\ndata: ${VALID[1]}\n\nevent: message\r\ndata: ${VALID[2]}\r\n\r\n`;
	for (let seed = SEED; seed < SEED + 40; seed++) {
		const rand = generator(seed);
		const json = feed(encodeUtf8(`  ${VALID[2]}`), rand, RESPONSE_JSON);
		assert.ok(!json.error && json.messages.length === 1 && json.messages[0].kind === "result", `seed ${seed}: ${String(json.error)}`);
		const sse = feed(encodeUtf8(stream), rand, RESPONSE_SSE);
		assert.deepEqual(sse.messages.map((m) => m.kind), ["notification", "result"], `seed ${seed}: ${String(sse.error)}`);
	}
	assert.ok(feed(encodeUtf8(VALID[2]), generator(1), RESPONSE_SSE).error instanceof HttpError, "a JSON body that says it is a stream is refused");
	for (let seed = SEED; seed < SEED + SEEDS; seed++) {
		const rand = generator(seed + 10_000);
		const bytes = seed % 4 === 0 ? randomBytes(rand, 400) : mutate(encodeUtf8(seed % 2 ? stream : VALID[rand(VALID.length)]), rand);
		const { error } = feed(bytes, rand, seed % 2 ? RESPONSE_SSE : RESPONSE_JSON);
		if (error !== undefined && !(error instanceof JsonRpcError) && !(error instanceof HttpError)) throw new Error(`seed ${seed}: ${String(error)}`);
	}
});

// mcp/jsonrpc: the JSON-RPC 2.0 messages MCP speaks (the client in the agent
// machine, the server in the main machine), read from bytes and written as text.
//
// readMessage() takes one message's bytes (a POST body, an SSE event's data)
// and gives a checked JsonRpcMessage or throws a JsonRpcError carrying the
// specification's code: -32700 when the bytes are not JSON (checked natively by
// host/bytes jsonSkip, which also bounds the nesting to MCP_JSON_DEPTH_MAX, so
// JSON.parse never recurses deeper) and -32600 when the JSON is not one
// JSON-RPC 2.0 message (a batch, a wrong "jsonrpc", an id that is not a
// string or an integer, a method that is not a string, params that are not an
// object, a response with both or neither of result and error). Bigger than
// MCP_MESSAGE_MAX_BYTES is refused before anything is read. What a reply to a
// bad message carries as its id is the JsonRpcError's id: the message's own id
// when it could be read, else null (JSON-RPC 2.0 §5).
import { MCP_ERROR_MESSAGE_MAX_CHARS, MCP_JSON_DEPTH_MAX, MCP_MESSAGE_MAX_BYTES } from "budgets";
import { jsonSkip } from "host/bytes";
import type { JsonObject, JsonValue } from "llm/types";
import { decodeUtf8 } from "net/utf8";
import { clip } from "util/text";
import { isObject as isJsonObject } from "util/values";

/** The JSON-RPC 2.0 error codes MCP uses. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export type JsonRpcId = string | number;

export interface JsonRpcRequest { kind: "request"; id: JsonRpcId; method: string; params: JsonObject | undefined }
export interface JsonRpcNotification { kind: "notification"; method: string; params: JsonObject | undefined }
export interface JsonRpcResult { kind: "result"; id: JsonRpcId; result: JsonObject }
export interface JsonRpcFailure { kind: "error"; id: JsonRpcId | null; code: number; message: string; data: JsonValue | undefined }
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResult | JsonRpcFailure;

/** A message that cannot be read, with the code and id its error reply carries. */
export class JsonRpcError extends Error {
	override name = "JsonRpcError";
	readonly code: number;
	readonly id: JsonRpcId | null;
	constructor(code: number, message: string, id: JsonRpcId | null = null) {
		super(message);
		this.code = code;
		this.id = id;
	}
}

const WHITESPACE = new Set([0x20, 0x09, 0x0A, 0x0D]);

const isObject = isJsonObject as (value: unknown) => value is JsonObject;

function isId(value: unknown): value is JsonRpcId {
	return typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
}

/** What went wrong in jsonSkip's code, for the -32700 sentence. */
function syntaxProblem(code: number): string {
	switch (code) {
		case -1: return "it ends in the middle";
		case -9: return `it nests deeper than ${MCP_JSON_DEPTH_MAX} levels`;
		case -3: return "a string is not closed";
		case -4: return "a string holds a control character";
		default: return "it is not valid JSON";
	}
}

/** One message from bytes[start, end): checked, or a JsonRpcError with the specification's code. */
export function readMessage(bytes: Uint8Array, start = 0, end = bytes.length): JsonRpcMessage {
	if (end - start > MCP_MESSAGE_MAX_BYTES) throw new JsonRpcError(INVALID_REQUEST, `the message is ${end - start} bytes, more than the ${MCP_MESSAGE_MAX_BYTES} allowed`);
	const after = jsonSkip(bytes, start, end, MCP_JSON_DEPTH_MAX);
	if (after < 0) throw new JsonRpcError(PARSE_ERROR, `parse error: ${syntaxProblem(after)}`);
	for (let i = after; i < end; i++) if (!WHITESPACE.has(bytes[i])) throw new JsonRpcError(PARSE_ERROR, "parse error: more follows the JSON value");
	let value: unknown;
	try {
		value = JSON.parse(decodeUtf8(bytes, start, end));
	} catch {
		throw new JsonRpcError(PARSE_ERROR, "parse error: it is not valid JSON");
	}
	return checkMessage(value);
}

/** A parsed value as one message (readMessage's checks after the parse). */
export function checkMessage(value: unknown): JsonRpcMessage {
	if (Array.isArray(value)) throw new JsonRpcError(INVALID_REQUEST, "invalid request: batches are not part of MCP; send one message per request");
	if (!isObject(value)) throw new JsonRpcError(INVALID_REQUEST, "invalid request: a message is a JSON object");
	const hasId = Object.prototype.hasOwnProperty.call(value, "id");
	const id = isId(value.id) ? value.id : null;
	const invalid = (why: string): never => { throw new JsonRpcError(INVALID_REQUEST, `invalid request: ${why}`, id); };
	if (value.jsonrpc !== "2.0") invalid('"jsonrpc" must be "2.0"');
	if (hasId && !isId(value.id) && !(value.id === null && "error" in value)) invalid("the id must be a string or an integer");
	if ("method" in value) {
		if (typeof value.method !== "string" || !value.method) invalid("the method must be a non-empty string");
		if (value.params !== undefined && !isObject(value.params)) invalid("params must be an object");
		if ("result" in value || "error" in value) invalid("a request carries no result or error");
		const method = value.method as string, params = value.params as JsonObject | undefined;
		return hasId ? { kind: "request", id: value.id as JsonRpcId, method, params } : { kind: "notification", method, params };
	}
	if (!hasId) invalid("a message without a method is a response and needs an id");
	const hasResult = "result" in value, hasError = "error" in value;
	if (hasResult === hasError) invalid("a response carries exactly one of result and error");
	if (hasResult) {
		if (!isObject(value.result)) invalid("the result must be an object");
		if (value.id === null) invalid("a result needs the id of its request");
		return { kind: "result", id: value.id as JsonRpcId, result: value.result as JsonObject };
	}
	const error = value.error;
	if (!isObject(error) || typeof error.code !== "number" || !Number.isInteger(error.code) || typeof error.message !== "string")
		invalid("the error must be an object with an integer code and a message");
	const failure = error as JsonObject;
	return { kind: "error", id: value.id as JsonRpcId | null, code: failure.code as number, message: clip(failure.message as string, MCP_ERROR_MESSAGE_MAX_CHARS), data: failure.data };
}

/** A request's text. */
export function requestText(id: JsonRpcId, method: string, params?: JsonObject): string {
	return JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
}

/** A notification's text. */
export function notificationText(method: string, params?: JsonObject): string {
	return JSON.stringify(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
}

/** A result's text. */
export function resultText(id: JsonRpcId, result: JsonObject): string {
	return JSON.stringify({ jsonrpc: "2.0", id, result });
}

/** An error reply's text. */
export function errorText(id: JsonRpcId | null, code: number, message: string, data?: JsonValue): string {
	const error: JsonObject = data === undefined ? { code, message } : { code, message, data };
	return JSON.stringify({ jsonrpc: "2.0", id, error });
}

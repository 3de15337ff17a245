// mcp/client: one MCP server as the agent reaches it, over the Streamable HTTP
// transport (MCP 2025-11-25, 2025-06-18, 2025-03-26): every JSON-RPC message is a
// POST to the server's URL; a request's answer comes back as one JSON body or as
// an SSE stream that may carry the server's notifications and requests first; a
// notification is answered 202. The server's session id (Mcp-Session-Id) and the
// negotiated revision (MCP-Protocol-Version) go with every message after
// initialize; a 404 on a session means it is gone, and the client initializes a
// new one and sends the message again, once. A listening GET stream hears
// notifications/tools/list_changed (when the server says it sends them) and the
// tools are listed again; it is opened again after MCP_LISTEN_MS.
//
// Lifecycle: connect() = initialize (our revision, no client capabilities),
// notifications/initialized, tools/list (following nextCursor up to
// MCP_TOOLS_PAGES_MAX pages), then ready. A failure (down, a refused token, an
// answer that is not MCP) leaves the server "failed" with a sentence, tried again
// after MCP_RETRY_MS and at its next call; the other servers and the rest of the
// agent go on. A call cancelled by its request aborts its HTTP exchange and tells
// the server (notifications/cancelled). Every wait and size is bounded (budgets:
// MCP_*): connect, request, call and notification timeouts, one message, one
// reply stream. Bytes are read by mcp/jsonrpc's readMessage, which checks them.
//
// The HTTP client is the agent machine's (net/board: keep-alive, TLS, PSRAM
// bodies); an SSE reply is read by net/sse's parser, its events handed over as
// bytes. What the body is comes from its first byte ('{' a JSON body, else an
// event stream), checked against its Content-Type when the reply ends.
import {
	MCP_CALL_TIMEOUT_MS, MCP_CONNECT_TIMEOUT_MS, MCP_ERROR_MESSAGE_MAX_CHARS, MCP_IMAGES_PER_RESULT_MAX, MCP_LISTEN_MS, MCP_MESSAGE_MAX_BYTES, MCP_NOTIFY_TIMEOUT_MS,
	MCP_REQUEST_TIMEOUT_MS, MCP_RETRY_MS, MCP_SESSION_ID_MAX_CHARS, MCP_STREAM_MAX_BYTES, MCP_TOOLS_PAGES_MAX,
} from "budgets";
import type { ChatOptions, ChatResponse, JsonObject, JsonValue, MediaRequest } from "llm/types";
import { Aborter } from "net/abort";
import { ByteBuffer } from "net/bytes";
import { SseParser, type SseDataSink } from "net/sse";
import { HttpError, type AbortSignalLike, type HttpMethod, type HttpResponse, type HttpTransport, type TimerLike } from "net/types";
import { decodeUtf8 } from "net/utf8";
import { METHOD_NOT_FOUND, errorText, notificationText, readMessage, requestText, resultText, type JsonRpcId, type JsonRpcMessage } from "mcp/jsonrpc";
import { LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS, SESSION_HEADER, type ServerEntry } from "mcp/types";
import { decode as decodeBase64 } from "util/base64";
import { messageOf } from "util/errors";
import { clip } from "util/text";
import { isObject as isJsonObject } from "util/values";

export interface McpClientDeps {
	http: HttpTransport;
	timer: TimerLike;
	/** Monotonic milliseconds. */
	now(): number;
	log(line: string): void;
	/** Who we are in initialize. */
	clientInfo: { name: string; version: string };
	/** The server's tools changed (listed again, or it failed): the tool list is built again. */
	changed(): void;
	/**
	 * The vision path (llm/runtime inferMedia, as inspect_image uses it): an image a
	 * tool returned is looked at by the model, under the profile's checks (vision,
	 * size, type). Absent: images are described by type and size, not seen.
	 */
	inferMedia?(request: MediaRequest, options?: ChatOptions): Promise<ChatResponse>;
}

/** A tool as the server lists it (checked for shape; the schema is checked where it becomes a capability). */
export interface RemoteTool {
	name: string;
	description: string;
	inputSchema: JsonObject;
}

export type ServerState = "connecting" | "ready" | "failed" | "closed";

/** What a tools/call answered, as the model reads it. */
export interface CallOutcome {
	content: string;
	is_error?: true;
}

/** A failure to say to the model or a person: a sentence that names the server. */
export class McpError extends Error {
	override name = "McpError";
}

/** A JSON-RPC error the server answered. */
class RemoteError extends Error {
	readonly code: number;
	constructor(code: number, message: string) {
		super(message);
		this.code = code;
	}
}

/** The server no longer knows our session (404): initialize again. */
class SessionGone extends Error {}

const OPEN_BRACE = 0x7B;
const JSON_TYPE = /^application\/json/i, SSE_TYPE = /^text\/event-stream/i;
const VISIBLE_ASCII = /^[\x21-\x7E]+$/;

const isObject = isJsonObject as (value: unknown) => value is JsonObject;

/** One POST's or GET's reply, fed as the HTTP client's onChunk: a JSON body or an event stream, each message handed to onMessage. */
export class ReplyReader implements SseDataSink {
	#mode: "unknown" | "json" | "sse" = "unknown";
	#json: ByteBuffer | undefined;
	#sse: SseParser | undefined;
	#bytes = 0;
	readonly #onMessage: (message: JsonRpcMessage) => void;

	constructor(onMessage: (message: JsonRpcMessage) => void) {
		this.#onMessage = onMessage;
	}

	get mode(): "unknown" | "json" | "sse" { return this.#mode; }

	chunk(bytes: Uint8Array): void {
		this.#bytes += bytes.length;
		if (this.#bytes > MCP_STREAM_MAX_BYTES) throw new HttpError("too_large", `the reply is larger than ${MCP_STREAM_MAX_BYTES} bytes`);
		let start = 0;
		if (this.#mode === "unknown") {
			while (start < bytes.length && (bytes[start] === 0x20 || bytes[start] === 0x0A || bytes[start] === 0x0D || bytes[start] === 0x09)) start++;
			if (start === bytes.length) return;
			if (bytes[start] === OPEN_BRACE) {
				this.#mode = "json";
				this.#json = new ByteBuffer(1024, MCP_MESSAGE_MAX_BYTES, () => { throw new HttpError("too_large", `a message is larger than ${MCP_MESSAGE_MAX_BYTES} bytes`); });
			} else {
				this.#mode = "sse";
				this.#sse = new SseParser(() => {}, MCP_MESSAGE_MAX_BYTES, this);
			}
		}
		if (this.#mode === "json") this.#json!.append(bytes, start);
		else this.#sse!.push(start ? bytes.subarray(start) : bytes);
	}

	/** An SSE event's data: one message. */
	push(bytes: Uint8Array, start: number, end: number): void {
		this.#onMessage(readMessage(bytes, start, end));
	}

	/** The reply ended: a JSON body is read now; checks the Content-Type against what the body was. */
	end(response: HttpResponse): void {
		const type = response.headers["content-type"] ?? "";
		if (this.#mode === "json") {
			if (!JSON_TYPE.test(type)) throw new HttpError("protocol", `the reply is JSON but says Content-Type "${clip(type, 60)}"`);
			this.#onMessage(readMessage(this.#json!.view()));
		} else if (this.#mode === "sse") {
			if (!SSE_TYPE.test(type)) throw new HttpError("protocol", `the reply is not JSON and not an event stream (Content-Type "${clip(type, 60)}")`);
			this.#sse!.end();
		}
	}
}

export class McpServer {
	readonly entry: ServerEntry;
	readonly #deps: McpClientDeps;
	#state: ServerState = "connecting";
	#error = "";
	#session: string | undefined = undefined;
	#version = LATEST_PROTOCOL_VERSION;
	/** initialize answered: the revision goes with every message. */
	#negotiated = false;
	#serverName = "";
	#listChanged = false;
	#tools: RemoteTool[] = [];
	#nextId = 1;
	#connecting: Promise<void> | undefined = undefined;
	#retryTimer: unknown = undefined;
	#listenTimer: unknown = undefined;
	#listening: Aborter | undefined = undefined;
	#refreshing = false;
	#refreshAgain = false;
	/** Exchanges in flight, aborted by close(). */
	readonly #inFlight = new Set<Aborter>();

	constructor(entry: ServerEntry, deps: McpClientDeps) {
		this.entry = entry;
		this.#deps = deps;
	}

	get name(): string { return this.entry.name; }
	get state(): ServerState { return this.#state; }
	/** Why it failed ("" when it did not). */
	get error(): string { return this.#error; }
	get tools(): readonly RemoteTool[] { return this.#tools; }
	get protocolVersion(): string { return this.#version; }
	/** The server's name and version from initialize. */
	get serverName(): string { return this.#serverName; }
	/** Whether a listening stream is open for notifications. */
	get listening(): boolean { return this.#listening !== undefined; }

	/** Connects in the background (a failure is the server's state, never thrown). */
	start(): void {
		this.connect().catch(() => {});
	}

	/** initialize, initialized, tools/list; resolves when ready, rejects with an McpError. Concurrent calls share one attempt. */
	connect(): Promise<void> {
		if (this.#state === "ready") return Promise.resolve();
		if (this.#state === "closed") return Promise.reject(new McpError(`the MCP server ${this.name} is no longer configured`));
		if (!this.#connecting) {
			this.#state = "connecting";
			this.#clearRetry();
			this.#connecting = this.#handshake().then(() => {
				this.#connecting = undefined;
				if (this.#state === "closed") return;
				this.#state = "ready";
				this.#error = "";
				this.#deps.log(`mcp: ${this.name} ready (${this.#serverName || "unnamed server"}, MCP ${this.#version}, ${this.#tools.length} tools)`);
				this.#deps.changed();
				if (this.#listChanged) this.#listen();
			}, (error) => {
				this.#connecting = undefined;
				if (this.#state !== "closed") this.#fail(this.#describe(error));
				throw new McpError(this.#error);
			});
		}
		return this.#connecting;
	}

	async #handshake(): Promise<void> {
		this.#session = undefined;
		this.#negotiated = false;
		this.#version = LATEST_PROTOCOL_VERSION;
		const result = await this.#request("initialize", {
			protocolVersion: LATEST_PROTOCOL_VERSION,
			capabilities: {},
			clientInfo: this.#deps.clientInfo,
		}, MCP_REQUEST_TIMEOUT_MS, undefined, false);
		const version = result.protocolVersion;
		if (typeof version !== "string" || !PROTOCOL_VERSIONS.includes(version))
			throw new McpError(`it speaks MCP ${typeof version === "string" ? clip(version, 20) : "(no version)"}, not one of ${PROTOCOL_VERSIONS.join(", ")}`);
		this.#version = version;
		this.#negotiated = true;
		const info = isObject(result.serverInfo) ? result.serverInfo : {};
		this.#serverName = [info.name, info.version].filter((v) => typeof v === "string").map((v) => clip(v as string, 40)).join(" ");
		const capabilities = isObject(result.capabilities) ? result.capabilities : {};
		if (!isObject(capabilities.tools)) throw new McpError("it offers no tools");
		this.#listChanged = capabilities.tools.listChanged === true;
		await this.#notify("notifications/initialized");
		this.#tools = await this.#listTools(false);
	}

	/** tools/list, page after page; again: a lost session is made again (not inside the handshake, which makes it). */
	async #listTools(again: boolean): Promise<RemoteTool[]> {
		const tools: RemoteTool[] = [];
		let cursor: string | undefined;
		for (let page = 0; page < MCP_TOOLS_PAGES_MAX; page++) {
			const result = await this.#request("tools/list", cursor === undefined ? undefined : { cursor }, MCP_REQUEST_TIMEOUT_MS, undefined, again);
			if (!Array.isArray(result.tools)) throw new McpError("its tools/list answer has no list of tools");
			for (const tool of result.tools) {
				if (!isObject(tool) || typeof tool.name !== "string" || !isObject(tool.inputSchema)) continue;
				const description = typeof tool.description === "string" ? tool.description : typeof tool.title === "string" ? tool.title : "";
				tools.push({ name: tool.name, description, inputSchema: tool.inputSchema });
			}
			if (typeof result.nextCursor !== "string" || !result.nextCursor) return tools;
			cursor = result.nextCursor;
			if (page === MCP_TOOLS_PAGES_MAX - 1) this.#deps.log(`mcp: ${this.name} lists more than ${MCP_TOOLS_PAGES_MAX} pages of tools; the rest are left out`);
		}
		return tools;
	}

	/** Lists the tools again (notifications/tools/list_changed); one at a time, again once if asked meanwhile. */
	refresh(): void {
		if (this.#state !== "ready") return;
		if (this.#refreshing) {
			this.#refreshAgain = true;
			return;
		}
		this.#refreshing = true;
		this.#listTools(true).then((tools) => {
			this.#tools = tools;
			this.#deps.log(`mcp: ${this.name} tools changed (${tools.length} tools)`);
			this.#deps.changed();
		}, (error) => {
			this.#deps.log(`mcp: ${this.name}: listing its tools again failed: ${this.#describe(error)}`);
		}).then(() => {
			this.#refreshing = false;
			if (this.#refreshAgain) {
				this.#refreshAgain = false;
				this.refresh();
			}
		});
	}

	/** One tools/call: its result as text, or an is_error outcome with a sentence; never rejects. */
	async call(tool: string, args: JsonObject, signal: AbortSignalLike): Promise<CallOutcome> {
		try {
			if (this.#state !== "ready") await this.connect();
			const result = await this.#request("tools/call", { name: tool, arguments: args }, MCP_CALL_TIMEOUT_MS, signal, true);
			const outcome = await callOutcome(result, this.#viewer(tool, signal));
			if (signal.aborted) return { content: "the call was cancelled", is_error: true };
			return outcome;
		} catch (error) {
			if (signal.aborted) return { content: "the call was cancelled", is_error: true };
			if (error instanceof RemoteError) return { content: `the MCP server ${this.name} refused the call: ${error.message} (JSON-RPC error ${error.code})`, is_error: true };
			const why = error instanceof McpError ? error.message : this.#describe(error);
			return { content: `the MCP server ${this.name} failed: ${why}; the board's other tools still work`, is_error: true };
		}
	}

	/** How an image this tool returned is seen: through the vision path, asked to say what it shows. */
	#viewer(tool: string, signal: AbortSignalLike): ImageViewer | undefined {
		const infer = this.#deps.inferMedia;
		if (!infer) return undefined;
		return async (image) => {
			const prompt = `The tool ${tool} of the MCP server ${this.name} returned this image. Say what it shows, precisely and completely: any text, numbers, readings and states in it.`;
			const response = await infer({ prompt, image: { bytes: image.bytes.buffer as ArrayBuffer, mime: image.mime } }, { signal });
			const text = typeof response.message.content === "string" ? response.message.content.trim() : "";
			if (!text) throw new Error("the vision model said nothing about it");
			return text;
		};
	}

	/** Ends the session (DELETE, not waited for) and everything in flight. */
	close(): void {
		if (this.#state === "closed") return;
		this.#state = "closed";
		this.#clearRetry();
		if (this.#listenTimer !== undefined) this.#deps.timer.clear(this.#listenTimer);
		this.#listenTimer = undefined;
		for (const aborter of [...this.#inFlight]) aborter.abort("closed");
		this.#inFlight.clear();
		this.#listening = undefined;
		if (this.#session !== undefined) {
			this.#deps.http.request({
				method: "DELETE", url: this.entry.url, headers: this.#headers("DELETE"),
				connectTimeoutMs: MCP_CONNECT_TIMEOUT_MS, firstByteTimeoutMs: MCP_NOTIFY_TIMEOUT_MS, totalTimeoutMs: MCP_NOTIFY_TIMEOUT_MS,
			}).catch(() => {});
		}
		this.#session = undefined;
	}

	#fail(why: string): void {
		this.#state = "failed";
		this.#error = why;
		this.#deps.log(`mcp: ${this.name} failed: ${why}; tried again in ${MCP_RETRY_MS / 1000} s`);
		this.#deps.changed();
		this.#clearRetry();
		this.#retryTimer = this.#deps.timer.set(() => {
			this.#retryTimer = undefined;
			if (this.#state === "failed") this.start();
		}, MCP_RETRY_MS);
	}

	#clearRetry(): void {
		if (this.#retryTimer !== undefined) this.#deps.timer.clear(this.#retryTimer);
		this.#retryTimer = undefined;
	}

	/** A failure as a sentence (never the token: errors quote bodies and URLs, not headers). */
	#describe(error: unknown): string {
		if (error instanceof McpError || error instanceof RemoteError) return error.message;
		if (error instanceof HttpError) {
			switch (error.kind) {
				case "status":
					if (error.status === 401 || error.status === 403)
						return `it refused ${this.entry.token ? "the token" : "a request without a token"} (HTTP ${error.status}); check the token in mcp.servers`;
					return `it answered HTTP ${error.status}${error.body ? `: ${clip(decodeLine(error.body), 120)}` : ""}`;
				case "timeout": return `no answer in time (${error.message})`;
				case "connect": case "dns": case "tls": return `it cannot be reached (${error.message})`;
				case "aborted": return "the call was cancelled";
				default: return `its answer is not MCP (${clip(error.message, MCP_ERROR_MESSAGE_MAX_CHARS)})`;
			}
		}
		return `its answer is not MCP (${clip(messageOf(error), MCP_ERROR_MESSAGE_MAX_CHARS)})`;
	}

	/** The transport's headers: a POST carries JSON and takes JSON or a stream, a GET takes a stream; the token, session and revision on each. */
	#headers(method: HttpMethod): Record<string, string> {
		const headers: Record<string, string> = {};
		if (method === "POST") {
			headers.Accept = "application/json, text/event-stream";
			headers["Content-Type"] = "application/json";
		} else if (method === "GET") headers.Accept = "text/event-stream";
		if (this.entry.token) headers.Authorization = `Bearer ${this.entry.token}`;
		if (this.#session !== undefined) headers["Mcp-Session-Id"] = this.#session;
		if (this.#negotiated) headers["MCP-Protocol-Version"] = this.#version;
		return headers;
	}

	/** A request's result; a 404 on our session makes a new one (connect) and sends it again, once, when again is true. */
	async #request(method: string, params: JsonObject | undefined, timeoutMs: number, signal: AbortSignalLike | undefined, again: boolean): Promise<JsonObject> {
		try {
			return await this.#exchange(method, params, timeoutMs, signal);
		} catch (error) {
			if (!(error instanceof SessionGone)) throw error;
			if (!again) throw new McpError("it no longer knows the session it made");
			this.#deps.log(`mcp: ${this.name}: the server ended our session; starting a new one`);
			if (this.#state === "ready") this.#state = "connecting";
			await this.connect();
			return this.#exchange(method, params, timeoutMs, signal);
		}
	}

	/** One request: POST, its answer read from a JSON body or an event stream; the request's signal cancels it (and tells the server). */
	#exchange(method: string, params: JsonObject | undefined, timeoutMs: number, signal: AbortSignalLike | undefined): Promise<JsonObject> {
		if (signal?.aborted) return Promise.reject(new HttpError("aborted", "aborted"));
		const id = this.#nextId++;
		const aborter = new Aborter();
		this.#inFlight.add(aborter);
		return new Promise<JsonObject>((resolve, reject) => {
			let settled = false;
			const done = (error: unknown, result?: JsonObject) => {
				if (settled) return;
				settled = true;
				this.#inFlight.delete(aborter);
				removeListener();
				if (error === undefined) resolve(result!);
				else reject(error);
			};
			const removeListener = signal ? signal.addListener((reason) => {
				if (settled) return;
				aborter.abort(reason);
				if (method === "tools/call") this.#notify("notifications/cancelled", { requestId: id, reason: "the request was cancelled" }).catch(() => {});
			}) : () => {};
			const reader = new ReplyReader((message) => {
				if (message.kind === "result" || message.kind === "error") {
					if (message.id !== id) return; // an answer to something else: not ours
					if (message.kind === "error") done(new RemoteError(message.code, message.message));
					else done(undefined, message.result);
					// An event stream may stay open after its answer: it is not needed any more.
					if (reader.mode === "sse") Promise.resolve().then(() => aborter.abort("answered"));
				} else this.#heard(message);
			});
			this.#deps.http.request({
				method: "POST", url: this.entry.url, headers: this.#headers("POST"), body: requestText(id, method, params), signal: aborter.signal,
				onHead: (_status, headers) => { if (method === "initialize") this.#takeSession(headers); },
				onChunk: (bytes) => reader.chunk(bytes),
				connectTimeoutMs: MCP_CONNECT_TIMEOUT_MS, firstByteTimeoutMs: timeoutMs, totalTimeoutMs: timeoutMs, maxBodyBytes: MCP_MESSAGE_MAX_BYTES,
			}).then((response) => {
				if (settled) return;
				reader.end(response);
				if (!settled) done(new McpError(response.status === 202 ? "it accepted a request without answering it" : "its reply ended without the answer"));
			}, (error) => {
				if (settled) return;
				if (error instanceof HttpError && error.kind === "status" && error.status === 404 && this.#session !== undefined && method !== "initialize") done(new SessionGone());
				else done(error);
			}).catch((error) => done(error));
		});
	}

	#takeSession(headers: Record<string, string>): void {
		const session = headers[SESSION_HEADER];
		if (session === undefined) return;
		if (session.length > MCP_SESSION_ID_MAX_CHARS || !VISIBLE_ASCII.test(session)) throw new McpError("its session id is not visible ASCII of at most 256 characters");
		this.#session = session;
	}

	/** A notification, or a reply to the server's request: POST, answered 202. */
	#notify(method: string, params?: JsonObject): Promise<void> {
		return this.#post(notificationText(method, params));
	}

	#post(body: string): Promise<void> {
		const aborter = new Aborter();
		this.#inFlight.add(aborter);
		return this.#deps.http.request({
			method: "POST", url: this.entry.url, headers: this.#headers("POST"), body, signal: aborter.signal,
			connectTimeoutMs: MCP_CONNECT_TIMEOUT_MS, firstByteTimeoutMs: MCP_NOTIFY_TIMEOUT_MS, totalTimeoutMs: MCP_NOTIFY_TIMEOUT_MS, maxBodyBytes: MCP_MESSAGE_MAX_BYTES,
		}).then(() => { this.#inFlight.delete(aborter); }, (error) => {
			this.#inFlight.delete(aborter);
			throw error;
		});
	}

	/** What the server says besides answers: list_changed lists the tools again; its requests (ping) are answered. */
	#heard(message: JsonRpcMessage): void {
		if (message.kind === "notification") {
			if (message.method === "notifications/tools/list_changed") this.refresh();
			return;
		}
		if (message.kind !== "request") return;
		const reply = message.method === "ping"
			? resultText(message.id, {})
			: errorText(message.id, METHOD_NOT_FOUND, `the client does not offer ${clip(message.method, 60)}`);
		this.#post(reply).catch((error) => this.#deps.log(`mcp: ${this.name}: answering its ${clip(message.method, 40)} failed: ${this.#describe(error)}`));
	}

	/** The listening GET stream: notifications between requests; opened again when it ends (at once after MCP_LISTEN_MS, else after MCP_RETRY_MS). */
	#listen(): void {
		if (this.#state !== "ready" || this.#listening) return;
		const aborter = new Aborter();
		this.#listening = aborter;
		this.#inFlight.add(aborter);
		const reader = new ReplyReader((message) => this.#heard(message));
		const again = (ms: number) => {
			this.#inFlight.delete(aborter);
			if (this.#listening === aborter) this.#listening = undefined;
			if (this.#state !== "ready" || aborter.signal.aborted) return;
			this.#listenTimer = this.#deps.timer.set(() => {
				this.#listenTimer = undefined;
				this.#listen();
			}, ms);
		};
		this.#deps.http.request({
			method: "GET", url: this.entry.url, headers: this.#headers("GET"), signal: aborter.signal,
			onChunk: (bytes) => reader.chunk(bytes),
			connectTimeoutMs: MCP_CONNECT_TIMEOUT_MS, firstByteTimeoutMs: MCP_LISTEN_MS, totalTimeoutMs: MCP_LISTEN_MS, maxBodyBytes: MCP_MESSAGE_MAX_BYTES,
		}).then(() => again(0), (error) => {
			if (error instanceof HttpError && error.kind === "status" && error.status === 405) {
				this.#deps.log(`mcp: ${this.name} offers no listening stream; its tool list is read again only when it is reconnected`);
				this.#inFlight.delete(aborter);
				if (this.#listening === aborter) this.#listening = undefined;
				return;
			}
			if (error instanceof HttpError && error.kind === "timeout" && error.timeout !== "connect") return again(0);
			if (error instanceof HttpError && error.kind === "status" && error.status === 404) {
				// Our session is gone: a new one, and its stream.
				this.#inFlight.delete(aborter);
				if (this.#listening === aborter) this.#listening = undefined;
				this.#state = "connecting";
				this.start();
				return;
			}
			if (!aborter.signal.aborted) this.#deps.log(`mcp: ${this.name}: its listening stream ended: ${this.#describe(error)}`);
			again(MCP_RETRY_MS);
		});
	}
}

function decodeLine(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

/** Looks at one image's bytes; resolves with what it shows, rejects with why it could not. */
export type ImageViewer = (image: { bytes: Uint8Array; mime: string | undefined }) => Promise<string>;

/**
 * A tools/call result as the text the model reads: its text content; an image
 * seen through the vision path when there is one (see; at most
 * MCP_IMAGES_PER_RESULT_MAX a result, each one model call), else described in a
 * line; other content described in a line.
 */
export async function callOutcome(result: JsonObject, see?: ImageViewer): Promise<CallOutcome> {
	const parts: string[] = [];
	const content = Array.isArray(result.content) ? result.content : [];
	let images = 0;
	for (const item of content) {
		if (!isObject(item)) continue;
		if (item.type === "image" && see) parts.push(await imageText(item, see, ++images));
		else parts.push(describeContent(item));
	}
	if (!parts.length && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
	const text = parts.join("\n") || "(the tool answered with no content)";
	return result.isError === true ? { content: text, is_error: true } : { content: text };
}

/** An image content item seen through see, or why it was not: a bracketed line either way. */
async function imageText(item: JsonObject, see: ImageViewer, index: number): Promise<string> {
	const mime = typeof item.mimeType === "string" ? clip(item.mimeType, 40) : undefined;
	const data = typeof item.data === "string" ? item.data : "";
	const kind = `image ${mime ?? "of unknown type"}`;
	let about = `${kind}, about ${Math.floor((data.length * 3) / 4)} bytes`;
	if (index > MCP_IMAGES_PER_RESULT_MAX) return `[${about}, not shown: only the first ${MCP_IMAGES_PER_RESULT_MAX} images of a result are looked at]`;
	let bytes: Uint8Array;
	try {
		bytes = decodeBase64(data, MCP_MESSAGE_MAX_BYTES);
	} catch (error) {
		return `[${about}, not shown: its data is not base64 (${messageOf(error).replace(/^base64: /, "")})]`;
	}
	if (!bytes.length) return `[${kind}, not shown: it is empty]`;
	about = `${kind}, ${bytes.length} bytes`;
	try {
		return `[${about}, as the vision model sees it: ${await see({ bytes, mime })}]`;
	} catch (error) {
		return `[${about}, not shown: ${clip(messageOf(error), MCP_ERROR_MESSAGE_MAX_CHARS)}]`;
	}
}

function describeContent(item: JsonObject): string {
	switch (item.type) {
		case "text": return typeof item.text === "string" ? item.text : "";
		case "image": case "audio": {
			const size = typeof item.data === "string" ? Math.floor((item.data.length * 3) / 4) : 0;
			return `[${item.type} ${typeof item.mimeType === "string" ? clip(item.mimeType, 40) : "of unknown type"}, about ${size} bytes, not shown]`;
		}
		case "resource_link": return `[resource ${typeof item.name === "string" ? clip(item.name, 80) : ""} ${typeof item.uri === "string" ? clip(item.uri, 200) : ""}]`.replace(/\s+\]/, "]");
		case "resource": {
			const resource = isObject(item.resource) ? item.resource : {};
			if (typeof resource.text === "string") return resource.text;
			return `[resource ${typeof resource.uri === "string" ? clip(resource.uri, 200) : ""} (binary, not shown)]`;
		}
		default: return `[${typeof item.type === "string" ? clip(item.type, 20) : "unknown"} content, not shown]`;
	}
}

export type { JsonRpcId, JsonValue };

// mcp/server: the board's tools for MCP clients, at /mcp on the firmware's HTTP
// server (httpd), over the Streamable HTTP transport: a POST carries one JSON-RPC
// message and a request is answered with one JSON body; a notification or a
// response gets 202; GET is 405 (no stream from the server: it sends nothing
// unasked); DELETE ends a session.
//
// Access: every message needs `Authorization: Bearer TOKEN` with a token of
// mcp.tokens (ROLE TOKEN, ...): no token, no access (401, nothing is read). The
// token's role is the role of every call the session makes: the agent's registry
// applies the same policy (owner-only tools refused to a user token), logs the
// call and checks its arguments as for a chat's request (the agent port's
// call_cap, source channel "mcp"). tools/list gives the board's own tools the
// role may run (not the remote ones the agent uses). Each token may make
// MCP_SERVER_CALLS_PER_MINUTE calls a minute and MCP_SERVER_CALLS_IN_FLIGHT at
// once; too many wrong tokens in a minute are answered 429.
//
// Lifecycle: initialize makes a session (Mcp-Session-Id, a random id bound to
// the token; at most MCP_SERVER_SESSIONS_MAX, the least recently used goes),
// the revision is the client's when we speak it, else our newest; every later
// request needs the session (400 without, 404 for an unknown one). Errors follow
// JSON-RPC: -32700 not JSON, -32600 not one message (400), -32601 an unknown
// method, -32602 bad params or an unknown tool; nothing runs for a message that
// is not read whole.
import {
	MCP_SERVER_AUTH_FAILURES_PER_MINUTE, MCP_SERVER_CALLS_IN_FLIGHT, MCP_SERVER_CALLS_PER_MINUTE, MCP_SERVER_SESSIONS_MAX, WEB_BODY_LIMIT_MAX_BYTES,
} from "budgets";
import type { SettingsSource } from "config/settings";
import { Channel } from "core/types";
import type { HttpRequest, HttpResponse, RouteTable } from "httpd/types";
import type { JsonObject } from "llm/types";
import {
	INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, JsonRpcError, errorText, readMessage, resultText, type JsonRpcId, type JsonRpcRequest,
} from "mcp/jsonrpc";
import { LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS, TOKENS_SETTING, parseTokens, type TokenEntry, type TokenRole } from "mcp/types";
import { randomFill } from "util/random";
import { messageOf } from "util/errors";
import { clip } from "util/text";
import { isObject } from "util/values";

export const MCP_PATH = "/mcp";
const MINUTE_MS = 60_000;

/** What the server needs of the agent (main/agent/client). */
export interface McpAgent {
	/** The board's own tools a role may run, each definition's JSON text. */
	listTools(role: TokenRole): Promise<string[]>;
	/** Runs one tool as request's role; resolves with its result text, rejects with a sentence (a refusal, a failure). */
	callCap(name: string, args: Record<string, unknown>, request: McpPortRequest): Promise<string>;
}

export interface McpPortRequest {
	flags: number;
	user_text: string;
	source: { channel: string; chat_id: string; sender_id: string; message_id: string; cap: string };
	role: TokenRole;
}

export interface McpServerOptions {
	routes: RouteTable;
	config: SettingsSource;
	agent: McpAgent;
	now(): number;
	log(line: string): void;
	firmware: { name: string; version: string };
}

interface Session {
	id: string;
	/** Which token made it (its index in mcp.tokens when made) and that token. */
	token: string;
	label: string;
	role: TokenRole;
	version: string;
	usedMs: number;
}

interface Budget {
	windowStart: number;
	calls: number;
	inFlight: number;
}

const JSON_HEADERS = Object.freeze({ "Content-Type": "application/json" });

export class McpHttpServer {
	readonly #options: McpServerOptions;
	readonly #sessions = new Map<string, Session>();
	readonly #budgets = new Map<string, Budget>();
	#authWindowStart = 0;
	#authFailures = 0;
	readonly #removals: Array<() => void> = [];

	constructor(options: McpServerOptions) {
		this.#options = options;
	}

	/** Adds POST, GET and DELETE /mcp to the routes. */
	start(): void {
		const routes = this.#options.routes;
		this.#removals.push(
			routes.add({ method: "POST", path: MCP_PATH, bodyMaxBytes: WEB_BODY_LIMIT_MAX_BYTES, handle: (request, response) => this.#post(request, response) }),
			routes.add({ method: "GET", path: MCP_PATH, bodyMaxBytes: 0, handle: (request, response) => this.#get(request, response) }),
			routes.add({ method: "DELETE", path: MCP_PATH, bodyMaxBytes: 0, handle: (request, response) => this.#delete(request, response) }),
		);
	}

	stop(): void {
		for (const remove of this.#removals.splice(0)) remove();
		this.#sessions.clear();
	}

	/** Sessions open now. */
	get sessions(): number { return this.#sessions.size; }

	/** The token the request carries, or undefined after answering 401 / 429 (nothing else is read). */
	#authorize(request: HttpRequest, response: HttpResponse): TokenEntry | undefined {
		let tokens: TokenEntry[] = [];
		try {
			tokens = parseTokens(this.#options.config.get(TOKENS_SETTING) ?? "");
		} catch (error) {
			this.#options.log(`mcp server: ${messageOf(error)}`);
		}
		const header = request.header("authorization") ?? "";
		const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
		const given = match ? match[1] : "";
		let found: TokenEntry | undefined;
		// Every token compared whole, so the time taken does not tell how much of one matched.
		for (const entry of tokens) if (sameText(entry.token, given)) found = entry;
		if (found) return found;
		const now = this.#options.now();
		if (now - this.#authWindowStart >= MINUTE_MS) {
			this.#authWindowStart = now;
			this.#authFailures = 0;
		}
		if (++this.#authFailures > MCP_SERVER_AUTH_FAILURES_PER_MINUTE) {
			response.send(429, errorText(null, INVALID_REQUEST, "too many requests without a valid token; try again in a minute"), { ...JSON_HEADERS, "Retry-After": "60" });
			return undefined;
		}
		const why = !tokens.length ? "the board's MCP server has no tokens (the owner sets mcp.tokens)" : given ? "the token is not valid" : "a bearer token is needed";
		this.#options.log(`mcp server: refused a request from ${request.remote}: ${given ? "a wrong token" : "no token"}`);
		response.send(401, errorText(null, INVALID_REQUEST, why), { ...JSON_HEADERS, "WWW-Authenticate": 'Bearer realm="xsclaw"' });
		return undefined;
	}

	#get(request: HttpRequest, response: HttpResponse): void {
		if (!this.#authorize(request, response)) return;
		response.send(405, errorText(null, METHOD_NOT_FOUND, "this server sends nothing unasked: POST each message"), { ...JSON_HEADERS, Allow: "POST, DELETE" });
	}

	#delete(request: HttpRequest, response: HttpResponse): void {
		const token = this.#authorize(request, response);
		if (!token) return;
		const session = this.#session(request, token);
		if (!session) return void response.send(404, errorText(null, INVALID_REQUEST, "no such session"), JSON_HEADERS);
		this.#sessions.delete(session.id);
		response.send(204);
	}

	/** The request's session when it names one of this token's. */
	#session(request: HttpRequest, token: TokenEntry): Session | undefined {
		const id = request.header("mcp-session-id");
		const session = id === undefined ? undefined : this.#sessions.get(id);
		return session && session.token === token.token ? session : undefined;
	}

	async #post(request: HttpRequest, response: HttpResponse): Promise<void> {
		const token = this.#authorize(request, response);
		if (!token) return;
		const origin = request.header("origin");
		if (origin !== undefined && !sameOrigin(origin, request.header("host"))) {
			return void response.send(403, errorText(null, INVALID_REQUEST, "a request from another origin"), JSON_HEADERS);
		}
		let message;
		try {
			message = readMessage(request.body);
		} catch (error) {
			const failure = error instanceof JsonRpcError ? error : new JsonRpcError(INVALID_REQUEST, messageOf(error));
			return void response.send(400, errorText(failure.id, failure.code, failure.message), JSON_HEADERS);
		}
		if (message.kind !== "request") {
			// Notifications (initialized, cancelled) and responses: taken, nothing to answer.
			if (message.kind === "notification" && message.method !== "notifications/initialized" && message.method !== "notifications/cancelled")
				this.#options.log(`mcp server: ignored the notification ${clip(message.method, 60)}`);
			return void response.send(202);
		}
		if (message.method === "initialize") return this.#initialize(message, token, response);
		const session = this.#session(request, token);
		if (!session) {
			const named = request.header("mcp-session-id") !== undefined;
			return void response.send(named ? 404 : 400, errorText(message.id, INVALID_REQUEST, named ? "no such session: initialize again" : "no session: initialize first, then send its Mcp-Session-Id"), JSON_HEADERS);
		}
		const version = request.header("mcp-protocol-version");
		if (version !== undefined && !PROTOCOL_VERSIONS.includes(version)) {
			return void response.send(400, errorText(message.id, INVALID_REQUEST, `MCP-Protocol-Version ${clip(version, 20)} is not one of ${PROTOCOL_VERSIONS.join(", ")}`), JSON_HEADERS);
		}
		session.usedMs = this.#options.now();
		const reply = await this.#answer(message, session);
		response.send(200, reply, JSON_HEADERS);
	}

	#initialize(message: JsonRpcRequest, token: TokenEntry, response: HttpResponse): void {
		const asked = message.params?.protocolVersion;
		if (typeof asked !== "string") return void response.send(400, errorText(message.id, INVALID_PARAMS, "initialize needs params.protocolVersion"), JSON_HEADERS);
		const version = PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
		if (this.#sessions.size >= MCP_SERVER_SESSIONS_MAX) {
			let oldest: Session | undefined;
			for (const s of this.#sessions.values()) if (!oldest || s.usedMs < oldest.usedMs) oldest = s;
			if (oldest) this.#sessions.delete(oldest.id);
		}
		const id = sessionId();
		this.#sessions.set(id, { id, token: token.token, label: `${token.role}`, role: token.role, version, usedMs: this.#options.now() });
		const result: JsonObject = {
			protocolVersion: version,
			capabilities: { tools: { listChanged: false } },
			serverInfo: { name: this.#options.firmware.name, version: this.#options.firmware.version },
			instructions: "The tools of an xsclaw board. Each call runs with the role of your token.",
		};
		this.#options.log(`mcp server: a session opened (role ${token.role}, MCP ${version})`);
		response.send(200, resultText(message.id, result), { ...JSON_HEADERS, "Mcp-Session-Id": id });
	}

	async #answer(message: JsonRpcRequest, session: Session): Promise<string> {
		const id = message.id;
		try {
			switch (message.method) {
				case "ping":
					return resultText(id, {});
				case "tools/list": {
					const cursor = message.params?.cursor;
					if (cursor !== undefined) return errorText(id, INVALID_PARAMS, "there is one page of tools: no cursor is valid");
					return resultText(id, { tools: await this.#tools(session.role) });
				}
				case "tools/call":
					return await this.#call(id, message.params, session);
				default:
					return errorText(id, METHOD_NOT_FOUND, `the method ${clip(message.method, 60)} is not served here (tools/list, tools/call, ping)`);
			}
		} catch (error) {
			return errorText(id, INTERNAL_ERROR, clip(messageOf(error), 300));
		}
	}

	async #tools(role: TokenRole): Promise<JsonObject[]> {
		const texts = await this.#options.agent.listTools(role);
		const tools: JsonObject[] = [];
		for (const text of texts) {
			const fn = JSON.parse(text) as { name: string; description?: string; parameters: JsonObject };
			tools.push(fn.description === undefined ? { name: fn.name, inputSchema: fn.parameters } : { name: fn.name, description: fn.description, inputSchema: fn.parameters });
		}
		return tools;
	}

	async #call(id: JsonRpcId, params: JsonObject | undefined, session: Session): Promise<string> {
		const name = params?.name;
		const args = params?.arguments ?? {};
		if (typeof name !== "string" || !name) return errorText(id, INVALID_PARAMS, "tools/call needs params.name");
		if (!isObject(args)) return errorText(id, INVALID_PARAMS, "params.arguments must be an object");
		// A name the board does not have at all is a protocol error; one the role may not run is the tool's refusal, said by the policy.
		const known = (await this.#options.agent.listTools("owner")).some((text) => (JSON.parse(text) as { name: string }).name === name);
		if (!known) return errorText(id, INVALID_PARAMS, `unknown tool ${clip(name, 64)}`);
		const budget = this.#budget(session.token);
		if (budget.calls >= MCP_SERVER_CALLS_PER_MINUTE) return resultText(id, toolError(`too many calls: at most ${MCP_SERVER_CALLS_PER_MINUTE} a minute for this token; try again in a minute`));
		if (budget.inFlight >= MCP_SERVER_CALLS_IN_FLIGHT) return resultText(id, toolError(`too many calls at once: at most ${MCP_SERVER_CALLS_IN_FLIGHT} for this token`));
		budget.calls++;
		budget.inFlight++;
		const started = this.#options.now();
		let text: string, failed = false;
		try {
			text = await this.#options.agent.callCap(name, args as Record<string, unknown>, {
				flags: 0, user_text: `mcp tools/call ${name}`, role: session.role,
				source: { channel: Channel.MCP, chat_id: session.label, sender_id: session.label, message_id: "", cap: "mcp" },
			});
		} catch (error) {
			text = messageOf(error);
			failed = true;
		} finally {
			budget.inFlight--;
		}
		this.#options.log(`mcp server: tools/call ${clip(name, 64)} role=${session.role} ${failed ? "error" : "ok"} ${Math.round(this.#options.now() - started)} ms`);
		return resultText(id, failed ? toolError(text) : { content: [{ type: "text", text }] });
	}

	#budget(token: string): Budget {
		const now = this.#options.now();
		let budget = this.#budgets.get(token);
		if (!budget) {
			budget = { windowStart: now, calls: 0, inFlight: 0 };
			this.#budgets.set(token, budget);
		}
		if (now - budget.windowStart >= MINUTE_MS) {
			budget.windowStart = now;
			budget.calls = 0;
		}
		return budget;
	}
}

function toolError(text: string): JsonObject {
	return { content: [{ type: "text", text }], isError: true };
}

/** Equal strings, compared over the whole of the longer one. */
function sameText(a: string, b: string): boolean {
	let differ = a.length ^ b.length;
	const n = Math.max(a.length, b.length);
	for (let i = 0; i < n; i++) differ |= (a.charCodeAt(i % (a.length || 1)) ^ b.charCodeAt(i % (b.length || 1)));
	return differ === 0 && a.length > 0;
}

/** Whether an Origin header names the host the request came to (a page elsewhere cannot drive the board's tools). */
function sameOrigin(origin: string, host: string | undefined): boolean {
	const match = /^https?:\/\/([^/]+)$/i.exec(origin.trim());
	return match !== null && host !== undefined && match[1].toLowerCase() === host.trim().toLowerCase();
}

function sessionId(): string {
	const bytes = randomFill(new Uint8Array(16));
	let id = "";
	for (let i = 0; i < bytes.length; i++) id += (bytes[i] + 0x100).toString(16).slice(1);
	return id;
}

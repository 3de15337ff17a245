// MCP servers for the tests, built with the official SDK (@modelcontextprotocol/sdk,
// pinned in devDependencies, used in the tests only) on loopback: the SDK's
// Streamable HTTP server transport, one session per client, behind a bearer token.
// Its tools are plain JSON schemas on the SDK's low-level Server, so the tests
// choose the page size of tools/list (pagination) and add tools while a client is
// connected (notifications/tools/list_changed).
import http from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** A PNG of one pixel, as base64: what the picture tool returns. */
export const PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** The default tools: echo, add, slow (waits, cancellable), fail (an error result), picture (text and an image). */
export function defaultTools() {
	return [
		{
			definition: { name: "echo", description: "Say the text back.", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
			run: ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
		},
		{
			definition: { name: "add", description: "Add two numbers.", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false } },
			run: ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
		},
		{
			definition: { name: "slow", description: "Wait, then answer.", inputSchema: { type: "object", properties: { ms: { type: "integer", minimum: 0 } }, required: ["ms"] } },
			run: ({ ms }, extra) => new Promise((resolve) => {
				const timer = setTimeout(() => resolve({ content: [{ type: "text", text: `slept ${ms} ms` }] }), ms);
				extra.signal.addEventListener("abort", () => { clearTimeout(timer); resolve({ content: [{ type: "text", text: "cancelled" }] }); });
			}),
		},
		{
			definition: { name: "fail", description: "Always fails.", inputSchema: { type: "object", properties: {} } },
			run: () => ({ content: [{ type: "text", text: "the sensor is unplugged" }], isError: true }),
		},
		{
			definition: { name: "picture", description: "A photo from the board's camera.", inputSchema: { type: "object", properties: {} } },
			run: () => ({ content: [{ type: "text", text: "the camera:" }, { type: "image", data: PIXEL_PNG, mimeType: "image/png" }] }),
		},
	];
}

/**
 * @param {{token?: string, pageSize?: number, tools?: Array<{definition, run}>, json?: boolean}} options
 *   token: required as `Authorization: Bearer` (401 otherwise); pageSize: tools per tools/list page;
 *   json: answer requests with JSON bodies instead of event streams.
 * @returns {Promise<{url, calls, cancelled, sessions, addTool(tool), kill(), close()}>}
 *   calls: every tools/call [{name, arguments, at}]; cancelled: requests the SDK saw cancelled.
 */
export async function startMcpServer({ token, pageSize = 100, tools = defaultTools(), json = false } = {}) {
	const list = [...tools];
	const calls = [];
	const cancelled = [];
	const sessions = new Map();
	const servers = new Set();
	const sockets = new Set();

	function makeServer() {
		const server = new Server({ name: "xsclaw-test-peer", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
		server.setRequestHandler(ListToolsRequestSchema, (request) => {
			const start = Number(request.params?.cursor ?? 0);
			const page = list.slice(start, start + pageSize).map((t) => t.definition);
			const next = start + pageSize < list.length ? String(start + pageSize) : undefined;
			return next === undefined ? { tools: page } : { tools: page, nextCursor: next };
		});
		server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
			const { name, arguments: args = {} } = request.params;
			calls.push({ name, arguments: args, at: Date.now() });
			extra.signal.addEventListener("abort", () => cancelled.push({ name, arguments: args }));
			const tool = list.find((t) => t.definition.name === name);
			if (!tool) return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
			return tool.run(args, extra);
		});
		servers.add(server);
		return server;
	}

	const httpServer = http.createServer(async (req, res) => {
		try {
			if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) {
				res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" }).end(JSON.stringify({ error: "invalid_token", error_description: "the token is not valid" }));
				return;
			}
			const id = req.headers["mcp-session-id"];
			let transport = id ? sessions.get(id) : undefined;
			if (id && !transport) {
				res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
				return;
			}
			if (!transport) {
				transport = new StreamableHTTPServerTransport({
					sessionIdGenerator: () => randomUUID(),
					enableJsonResponse: json,
					onsessioninitialized: (sid) => sessions.set(sid, transport),
				});
				transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
				await makeServer().connect(transport);
			}
			await transport.handleRequest(req, res);
		} catch (error) {
			if (!res.headersSent) res.writeHead(500).end(String(error));
		}
	});
	httpServer.on("connection", (socket) => {
		sockets.add(socket);
		socket.on("close", () => sockets.delete(socket));
	});
	await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
	const { port } = httpServer.address();
	return {
		url: `http://127.0.0.1:${port}/mcp`,
		port,
		calls,
		cancelled,
		sessions,
		/** Adds a tool; every connected client hears notifications/tools/list_changed. */
		async addTool(tool) {
			list.push(tool);
			for (const server of servers) await server.sendToolListChanged().catch(() => {});
		},
		/** The process "dies": every connection is cut at once, nothing more is answered. */
		kill() {
			for (const socket of sockets) socket.destroy();
			httpServer.close();
		},
		async close() {
			for (const transport of sessions.values()) await transport.close().catch(() => {});
			for (const socket of sockets) socket.destroy();
			await new Promise((resolve) => httpServer.close(() => resolve()));
		},
	};
}

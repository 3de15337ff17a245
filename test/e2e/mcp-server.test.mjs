// The board's MCP server (/mcp on the firmware's HTTP server, lin host started with
// --http 0) against the official SDK's client (@modelcontextprotocol/sdk, pinned,
// tests only) on loopback: tools/list and tools/call with an owner token and a user
// token (the owner-only gpio_write is not listed for the user and refused when
// called anyway, the pin unchanged); no token and a wrong token refused; a
// malformed JSON-RPC message gets the specification's error and nothing runs; an
// unknown session is 404; a token's calls a minute are bounded and wrong tokens are
// slowed to 429. No token reaches the log.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { withMockAndFirmware } from "./firmware.mjs";

const OWNER = "owner-token-0123456789abcdef";
const USER = "user-token-0123456789abcdef01";
const VARIANT = "release";

async function connect(url, token) {
	const headers = token === undefined ? {} : { Authorization: `Bearer ${token}` };
	const client = new Client({ name: "xsclaw-test-client", version: "1.0.0" });
	await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
	return client;
}

async function gpioLevel(fw, pin) {
	const out = await fw.run(`gpio ${pin}`, new RegExp(`^pin ${pin}: [01]$`, "m"));
	return Number(new RegExp(`^pin ${pin}: ([01])$`, "m").exec(out)[1]);
}

const post = (url, body, headers = {}) => fetch(url, {
	method: "POST", body,
	headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
});

test(`the board's MCP server: owner and user tokens get their role's tools, no token and a wrong one are refused, malformed JSON-RPC gets its error and runs nothing [${VARIANT}]`, async () => {
	let stderr = "";
	await withMockAndFirmware(VARIANT, async ({ fw }) => {
		const served = /web: serving (http:\/\/127\.0\.0\.1:\d+)\//;
		await fw.until(served);
		const url = `${served.exec(fw.printed())[1]}/mcp`;
		await fw.run(`config set mcp.tokens owner ${OWNER}, user ${USER}`, /^ok: /m);

		// The owner: every board tool, gpio_write runs.
		const owner = await connect(url, OWNER);
		assert.equal(owner.getServerVersion()?.name, "xsclaw");
		const ownerTools = (await owner.listTools()).tools.map((t) => t.name);
		assert.ok(ownerTools.includes("gpio_write") && ownerTools.includes("get_time"), ownerTools.join(","));
		assert.ok(!ownerTools.some((name) => name.includes("__")), "no remote tool is offered again");
		const time = await owner.callTool({ name: "get_time", arguments: {} });
		assert.ok(!time.isError && /UTC/.test(time.content[0].text), JSON.stringify(time));
		const wrote = await owner.callTool({ name: "gpio_write", arguments: { pin: 2, value: 1 } });
		assert.equal(wrote.isError, undefined, JSON.stringify(wrote));
		assert.equal(wrote.content[0].text, "pin 2 set to 1");
		assert.equal(await gpioLevel(fw, 2), 1);
		// Arguments are checked against the tool's schema, as for the model.
		const bad = await owner.callTool({ name: "gpio_write", arguments: { pin: 99, value: 1 } });
		assert.equal(bad.isError, true);
		assert.match(bad.content[0].text, /arguments\.pin must be at most 48, not 99/);

		// A user: gpio_write is neither listed nor run.
		const user = await connect(url, USER);
		const userTools = (await user.listTools()).tools.map((t) => t.name);
		assert.ok(userTools.includes("get_time") && !userTools.includes("gpio_write"), userTools.join(","));
		const refused = await user.callTool({ name: "gpio_write", arguments: { pin: 2, value: 0 } });
		assert.equal(refused.isError, true);
		assert.match(refused.content[0].text, /only for the owner/);
		assert.equal(await gpioLevel(fw, 2), 1, "the pin did not change");
		// A tool the board does not have is the protocol's invalid params.
		await assert.rejects(user.callTool({ name: "no_such_tool", arguments: {} }), /-32602|unknown tool/);

		// No token, a wrong token: 401, nothing served.
		await assert.rejects(connect(url), (error) => error.code === 401 && /a bearer token is needed/.test(error.message));
		await assert.rejects(connect(url, "not-a-token-of-this-board-000"), (error) => error.code === 401 && /the token is not valid/.test(error.message));
		const none = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
		assert.equal(none.status, 401);

		// Malformed JSON-RPC: the specification's errors, and nothing runs.
		const parse = await post(url, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ", { Authorization: `Bearer ${OWNER}` });
		assert.equal(parse.status, 400);
		assert.deepEqual((await parse.json()).error.code, -32700);
		const sessionId = owner.transport.sessionId;
		const session = { Authorization: `Bearer ${OWNER}`, "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "2025-11-25" };
		const call = { id: 7, method: "tools/call", params: { name: "gpio_write", arguments: { pin: 2, value: 0 } } };
		for (const wrong of [{ jsonrpc: "1.0", ...call }, [{ jsonrpc: "2.0", ...call }], { jsonrpc: "2.0", ...call, method: 5 }]) {
			const reply = await post(url, JSON.stringify(wrong), session);
			assert.equal(reply.status, 400, JSON.stringify(wrong));
			assert.equal((await reply.json()).error.code, -32600, JSON.stringify(wrong));
		}
		const unknown = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 8, method: "resources/list" }), session);
		assert.equal((await unknown.json()).error.code, -32601);
		assert.equal(await gpioLevel(fw, 2), 1, "no malformed message ran gpio_write");
		// A session this server does not know: 404.
		const gone = await post(url, JSON.stringify({ jsonrpc: "2.0", ...call }), { ...session, "Mcp-Session-Id": "0123456789abcdef0123456789abcdef" });
		assert.equal(gone.status, 404);
		assert.equal(await gpioLevel(fw, 2), 1);

		// Rate limits: a token's calls a minute (the user's refused past it, the owner's go on); guessing tokens is slowed to 429.
		let used = 1;
		for (; used < 30; used++) assert.equal((await user.callTool({ name: "get_time", arguments: {} })).isError, undefined, `call ${used + 1}`);
		const limited = await user.callTool({ name: "get_time", arguments: {} });
		assert.equal(limited.isError, true);
		assert.match(limited.content[0].text, /too many calls: at most 30 a minute for this token/);
		assert.equal((await owner.callTool({ name: "get_time", arguments: {} })).isError, undefined, "another token is not limited");
		const statuses = [];
		for (let i = 0; i < 25; i++) statuses.push((await post(url, "{}", { Authorization: "Bearer guess-0123456789abcdef" })).status);
		assert.ok(statuses.includes(401) && statuses.at(-1) === 429, statuses.join(","));
		assert.equal((await owner.callTool({ name: "get_time", arguments: {} })).isError, undefined, "a valid token still works");

		await owner.close();
		await user.close();
		stderr = fw.stderr;
	}, { prefix: "xsclaw-mcp-server-", args: ["--http", "0"], settings: ["config set gpio.allow 2"] });
	for (const token of [OWNER, USER]) assert.ok(!stderr.includes(token), "no token in the log");
});

// MCP as the agent meets it: the firmware on the lin host, the mock LLM (over TLS)
// and MCP servers built with the official SDK (test/e2e/mcp-peer.mjs) on loopback.
// The client: a turn calls a remote tool and quotes its result (tools listed over
// pages, the token sent, the arguments checked against the tool's schema before
// anything is sent); a tool added on the server reaches the model through
// notifications/tools/list_changed; a call cancelled on the console tells the
// server; a server killed mid-call ends that call with an error well within the
// timeout, and the rest keeps working; a bad token, a server that is down and one
// that answers garbage are each reported by `mcp status`, and none of the tokens
// reaches any output.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { PROTOCOLS, until, withMockAndFirmware } from "./firmware.mjs";
import { PIXEL_PNG, startMcpServer } from "./mcp-peer.mjs";

const KEY = "sk-mcp-e2e-secret-0123456789";
const TOKEN = "mcp-token-home-0123456789abcdef";
const WRONG = "mcp-token-wrong-0123456789abcdef";
const VARIANT = "release";

const toolResults = (record) => record.json.messages.filter((m) => m.role === "tool").map((m) => ({ id: m.tool_call_id, content: m.content }));
const resultOf = (record, id) => toolResults(record).find((r) => r.id === id)?.content;
const offered = (record) => (record.json.tools ?? []).map((d) => d.function.name);
const call = (id, name, args) => ({ type: "tool_calls", calls: [{ id, name, arguments: args }] });

/** Runs a console command and gives what it printed (commands answer in input order: `log level` after it marks the end). */
async function run(fw, line) {
	const from = fw.stdout.length;
	fw.send(line);
	fw.send("log level");
	await fw.until(/^log level: \w+$/m, { from });
	return fw.printed(from).replace(/^log level: \w+\n/m, "");
}

/** Waits until `mcp status` (or `mcp tools`) prints a line matching re. */
async function waitFor(fw, command, re, what) {
	let last = "";
	const start = Date.now();
	for (;;) {
		last = await run(fw, command);
		if (re.test(last)) return last;
		if (Date.now() - start > 20_000) throw new Error(`timed out waiting for ${what}; last:\n${last}`);
		await new Promise((r) => setTimeout(r, 200));
	}
}

async function ask(fw, text, answer) {
	const from = fw.stdout.length;
	fw.send(`ask ${text}`);
	await fw.until(answer, { from });
	return fw.printed(from);
}

/** A server that answers every request with text that is not MCP. */
async function startGarbage() {
	const server = http.createServer((req, res) => { req.resume(); res.writeHead(200, { "content-type": "application/json" }).end("{\"hello\": [1, 2"); });
	await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
	return { url: `http://127.0.0.1:${server.address().port}/mcp`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

test(`the agent uses a remote MCP server's tools: a turn quotes a remote result, schemas are checked, list_changed refreshes, a cancelled call tells the server, a killed server ends its call with an error, bad servers are reported [${VARIANT}]`, async () => {
	const home = await startMcpServer({ token: TOKEN, pageSize: 2 });
	const wrong = await startMcpServer({ token: TOKEN });
	const plain = await startMcpServer({ json: true });
	const garbage = await startGarbage();
	const down = await startMcpServer();
	const downUrl = down.url;
	await down.close();
	let stderr = "";
	try {
		await withMockAndFirmware(VARIANT, async ({ fw, mock }) => {
			await run(fw, `config set mcp.servers home ${home.url} ${TOKEN}, bad ${wrong.url} ${WRONG}, plain ${plain.url}, junk ${garbage.url}`);
			const status = await waitFor(fw, "mcp status", /home: ready.*5 tools[\s\S]*bad: failed[\s\S]*plain: ready[\s\S]*junk: failed/, "every server's state");
			assert.match(status, /^home: ready, http:\/\/127\.0\.0\.1:\d+\/mcp \(token\), xsclaw-test-peer 1\.0\.0, MCP 2025-11-25, 5 tools, listening$/m);
			assert.match(status, /^bad: failed, .*: it refused the token \(HTTP 401\); check the token in mcp\.servers$/m);
			assert.match(status, /^junk: failed, .*: its answer is not MCP \(parse error: [^)]+\)$/m);
			assert.match(status, /^plain: ready, .* \(no token\), xsclaw-test-peer 1\.0\.0, MCP 2025-11-25, 5 tools, listening$/m);
			// A server answering with JSON bodies instead of event streams; `tools call` runs a remote tool as the owner.
			assert.match(await run(fw, 'tools call plain__add {"a": 2, "b": 40}'), /^42$/m);
			assert.match(await run(fw, "config show"), /^mcp\.servers = \*\*\*\*/m);
			// A changed setting: the servers left out are closed, home keeps its session, a server that is down is reported.
			const sessions = home.sessions.size;
			await run(fw, `config set mcp.servers home ${home.url} ${TOKEN}, gone ${downUrl}`);
			const changed = await waitFor(fw, "mcp status", /gone: failed/, "the down server's state");
			assert.match(changed, /^gone: failed, .*: it cannot be reached \(.*refused/m);
			assert.match(changed, /^home: ready/m);
			assert.doesNotMatch(changed, /^(bad|plain|junk):/m);
			assert.equal(home.sessions.size, sessions, "home was not connected again");
			await until(() => plain.sessions.size === 0, "the removed server's session to be ended (DELETE)", 5_000);
			const tools = await run(fw, "mcp tools");
			for (const name of ["home__echo", "home__add", "home__slow", "home__fail", "home__picture"]) assert.match(tools, new RegExp(`^${name} \\[owner only\\]`, "m"));

			// A turn: the model calls the remote tool and quotes its result.
			mock.script(call("e1", "home__echo", { text: "hello board" }), { type: "text", text: "The server said: echo: hello board" });
			await ask(fw, "ask the home server to echo hello board", /^The server said: echo: hello board$/m);
			const round = mock.requests.at(-1);
			assert.equal(resultOf(round, "e1"), "echo: hello board");
			assert.ok(offered(mock.requests.at(-2)).includes("home__echo"), "the remote tools are offered");
			assert.deepEqual(home.calls.map((c) => c.name), ["echo"]);

			// Arguments that break the schema never reach the server; an error result is marked.
			mock.script(call("a1", "home__add", { a: "one", b: 2 }), call("f1", "home__fail", {}), { type: "text", text: "done" });
			await ask(fw, "add and fail", /^done$/m);
			assert.equal(resultOf(mock.requests.at(-2), "a1"), "the arguments do not fit the schema of home__add: arguments.a must be a number, not a string");
			assert.equal(resultOf(mock.requests.at(-1), "f1"), "the sensor is unplugged");
			assert.deepEqual(home.calls.map((c) => c.name), ["echo", "fail"]);

			// An image in a result goes through the vision path: refused by a model without vision (nothing sent for it)...
			const imageBytes = Buffer.from(PIXEL_PNG, "base64").length;
			const requests = mock.requests.length;
			mock.script(call("p1", "home__picture", {}), { type: "text", text: "no picture" });
			await ask(fw, "show me the board", /^no picture$/m);
			assert.equal(mock.requests.length, requests + 2, "no vision request was made");
			assert.match(resultOf(mock.requests.at(-1), "p1"), new RegExp(`^the camera:\\n\\[image image/png, ${imageBytes} bytes, not shown: the model gpt-mock cannot see images \\(llm\\.supports_vision is false\\); nothing was sent\\]$`));
			// ...and looked at by one that has it: the image's bytes reach the model, its answer is the result.
			await run(fw, "config set llm.supports_vision true");
			mock.script(call("p2", "home__picture", {}), { type: "text", text: "a green board, its red LED lit" }, { type: "text", text: "The red LED is lit." });
			await ask(fw, "look at the board", /^The red LED is lit\.$/m);
			const vision = JSON.stringify(mock.requests.at(-2).json);
			assert.ok(vision.includes(`data:image/png;base64,${PIXEL_PNG}`), "the vision request carries the image");
			assert.ok(vision.includes("The tool picture of the MCP server home returned this image"), vision.slice(0, 300));
			assert.equal(resultOf(mock.requests.at(-1), "p2"), `the camera:\n[image image/png, ${imageBytes} bytes, as the vision model sees it: a green board, its red LED lit]`);

			// list_changed: a tool added on the server joins the registry.
			await home.addTool({
				definition: { name: "weather", description: "Today's weather.", inputSchema: { type: "object", properties: {} } },
				run: () => ({ content: [{ type: "text", text: "sunny, 21 C" }] }),
			});
			await waitFor(fw, "mcp tools", /^home__weather \[owner only\]/m, "the new tool");

			// A call cancelled on the console: the server hears notifications/cancelled.
			mock.script(call("s1", "home__slow", { ms: 30_000 }));
			fw.send("ask wait for the slow tool");
			await until(() => home.calls.some((c) => c.name === "slow"), "the slow call to start");
			await fw.run("cancel", /request \d+ cancelled/);
			await until(() => home.cancelled.some((c) => c.name === "slow"), "the server to hear the cancellation", 10_000);

			// A server killed mid-call: that call ends with an error within the timeout; the agent answers.
			mock.script(call("k1", "home__slow", { ms: 30_000 }), { type: "text", text: "The home server died." });
			const before = home.calls.length;
			const from = fw.stdout.length;
			fw.send("ask wait again");
			await until(() => home.calls.length > before, "the second slow call to start");
			const killedAt = Date.now();
			home.kill();
			await fw.until(/^The home server died\.$/m, { from });
			assert.ok(Date.now() - killedAt < 10_000, `the call ended ${Date.now() - killedAt} ms after the kill`);
			assert.match(resultOf(mock.requests.at(-1), "k1"), /^the MCP server home failed: .+; the board's other tools still work$/);

			// The rest keeps working: a built-in tool in the next turn.
			mock.script(call("t1", "get_time", {}), { type: "text", text: "time ok" });
			await ask(fw, "what time is it", /^time ok$/m);
			assert.doesNotMatch(resultOf(mock.requests.at(-1), "t1"), /MCP/);
			stderr = fw.stderr;
		}, { key: KEY, prefix: "xsclaw-mcp-", protocol: PROTOCOLS[0] });
	} finally {
		await home.close().catch(() => {});
		await wrong.close();
		await plain.close();
		await garbage.close();
	}
	for (const secret of [TOKEN, WRONG]) assert.ok(!stderr.includes(secret), "no token in the log");
});

// The mock QQ platform (tools/mock-qq) against an independent QQ bot client
// from npm, qq-official-bot (pinned in package.json), so the mock's protocol is
// not only our reading of QQ's docs: the SDK fetches a token, asks
// /gateway/bot, identifies with the group-and-C2C intent, heartbeats, reads the
// mock's C2C and group @ events, and replies to them on the v2 message
// endpoints with the message's id. The SDK runs as its own process
// (test/e2e/qq-sdk-peer.mjs), whose axios interceptor sends every request to
// the mock (loopback only).
//
// What the SDK does differently from QQ's docs, and the mock holds to the docs:
// it sends replies without msg_type (documented as required: the mock answers
// 400), and after a dropped connection it identifies anew instead of resuming.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../../tools/build.mjs";
import { startMockQQ } from "../../tools/mock-qq/index.mjs";

test("qq-official-bot connects to the mock, receives C2C and group @ messages and replies to them", async () => {
	const qq = await startMockQQ({ appId: "1020304", secret: "sdk-secret", heartbeatMs: 500 });
	const child = spawn(process.execPath, [join(ROOT, "test", "e2e", "qq-sdk-peer.mjs"), qq.url, qq.tokenUrl, "1020304", "sdk-secret"], { stdio: ["pipe", "pipe", "inherit"] });
	const lines = [];
	let buffered = "";
	child.stdout.on("data", (chunk) => {
		buffered += chunk;
		let nl;
		while ((nl = buffered.indexOf("\n")) >= 0) {
			lines.push(JSON.parse(buffered.slice(0, nl)));
			buffered = buffered.slice(nl + 1);
		}
	});
	const exited = new Promise((resolve) => child.on("exit", resolve));
	try {
		await qq.waitFor(() => qq.live, 20_000, "the SDK's session");
		assert.deepEqual(qq.record.tokens.map((t) => [t.appId, t.ok]), [["1020304", true]]);
		assert.ok(qq.record.gateways.every((g) => g.token_ok), "the gateway was asked with a valid QQBot token");
		const hosts = lines.filter((l) => l.host).map((l) => l.host);
		assert.ok(hosts.includes("bots.qq.com") && hosts.includes("api.sgroup.qq.com"), `the SDK aimed at QQ's hosts (${hosts})`);
		const identify = qq.record.identify[0];
		assert.match(identify.token, /^QQBot mocktok-/);
		assert.equal(identify.intents, 1 << 25);

		const c2c = qq.say({ user: "SDKUSER1", text: "ping" });
		const group = qq.say({ group: "SDKGROUP1", user: "SDKMEMBER1", text: "ping group" });
		await qq.waitFor(() => qq.record.replies.length === 2, 20_000, "both replies");
		const received = lines.filter((l) => l.message).map((l) => [l.message.type, l.message.text.trim()]);
		assert.deepEqual(received, [["private", "ping"], ["group", "ping group"]]);
		const [toUser, toGroup] = qq.record.replies;
		assert.equal(toUser.path, "/v2/users/SDKUSER1/messages");
		assert.equal(toUser.msg_id, c2c);
		assert.equal(toGroup.path, "/v2/groups/SDKGROUP1/messages");
		assert.equal(toGroup.msg_id, group);
		assert.ok(qq.record.replies.every((r) => r.token_ok && r.content === "pong from the sdk"));
		// The one departure from the docs the mock refuses: no msg_type.
		assert.ok(qq.record.replies.every((r) => r.body.msg_type === undefined && r.status === 400));

		// Heartbeats carry the last seq and are acknowledged (the SDK keeps its session).
		await qq.waitFor(() => qq.record.heartbeats.some((h) => h.d === qq.seq), 20_000, "a heartbeat with the last seq");
		assert.ok(qq.live);
		// A dropped socket: the SDK connects again (it identifies anew).
		qq.drop();
		await qq.waitFor(() => qq.record.identify.length === 2 && qq.live, 30_000, "the SDK's new session");
	} finally {
		child.stdin.end();
		const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
		await exited;
		clearTimeout(timer);
		await qq.stop();
	}
});

// The QQ channel's parts (modules/main/channels/qq) with fakes for the HTTP client,
// the WebSocket and the clock: the token's reading and refresh schedule, the
// gateway's state machine (Hello -> Identify, heartbeats with the last seq,
// Resume after a drop, op 7, op 9, repeated dispatches, fatal close codes) and
// the channel's passive replies (msg_id, msg_seq, the 5-reply cap, the window).
import { assert, test } from "testing";
import { QQ_GROUP_REPLY_WINDOW_MS, QQ_MESSAGE_MAX_CHARS, QQ_TOKEN_REFRESH_MARGIN_MS, QQ_TOKEN_REFRESH_MIN_MS } from "budgets";
import { HttpError, type HttpRequest, type HttpResponse, type HttpTransport } from "net/types";
import { Pairing, type PairedChat } from "channels/pairing";
import { QqApi, QqApiError, readToken, refreshDelayMs, SECRET_MASK, TOKEN_MASK } from "channels/qq/api";
import { PAIRING_HINT, QqChannel } from "channels/qq/channel";
import { QqGateway, type GatewaySocket } from "channels/qq/gateway";
import { GROUP_AND_C2C_EVENT, messagesPath, parseGatewayPayload, parseMessage } from "channels/qq/payload";
import { readQqState } from "channels/qq/setup";
import type { InMessage, RouteOutcome } from "router/types";
import { WebSocketError } from "net/websocket/types";

const flush = async () => { for (let i = 0; i < 30; i++) await Promise.resolve(); };

/** A manual clock: timers fire when advance() passes them. */
class Clock {
	ms = 1000;
	#timers = new Map<number, { at: number; fn: () => void }>();
	#next = 1;
	readonly timers = {
		set: (fn: () => void, ms: number): unknown => { const id = this.#next++; this.#timers.set(id, { at: this.ms + Math.max(0, ms), fn }); return id; },
		clear: (id: unknown) => void this.#timers.delete(id as number),
	};
	now = () => this.ms;
	get pending(): number { return this.#timers.size; }
	async advance(ms: number): Promise<void> {
		const end = this.ms + ms;
		for (;;) {
			await flush();
			let first: [number, { at: number; fn: () => void }] | undefined;
			for (const entry of this.#timers) if (entry[1].at <= end && (!first || entry[1].at < first[1].at)) first = entry;
			if (!first) break;
			this.#timers.delete(first[0]);
			this.ms = Math.max(this.ms, first[1].at);
			first[1].fn();
		}
		this.ms = end;
		await flush();
	}
}

function fakeHttp(answer: (req: HttpRequest) => HttpResponse | HttpError) {
	const requests: HttpRequest[] = [];
	const http: HttpTransport = {
		async request(req) {
			requests.push(req);
			const out = answer(req);
			if (out instanceof HttpError) throw out;
			return out;
		},
		close() {},
	};
	return { http, requests };
}
const ok = (body: string): HttpResponse => ({ status: 200, headers: {}, body } as unknown as HttpResponse);

// ---- payloads ----

test("gateway payloads and message events are read, anything else is a sentence", () => {
	assert.deepEqual(parseGatewayPayload(`{"op":0,"s":3,"t":"READY","d":{}}`), { op: 0, d: {}, s: 3, t: "READY" });
	assert.deepEqual(parseGatewayPayload(`{"op":11}`), { op: 11, d: undefined });
	for (const bad of ["", "[]", `{"op":"1"}`, `{"op":0,"d":{}}`, `{"op":0,"s":-1,"t":"X"}`, `{"op":1.5}`]) {
		assert.throws(() => parseGatewayPayload(bad), /gateway payload|dispatch/);
	}
	const c2c = parseMessage("C2C_MESSAGE_CREATE", { id: "M1", author: { user_openid: "U1" }, content: "hi " });
	assert.deepEqual(c2c, { kind: "c2c", id: "M1", chat_id: "c2c:U1", sender_id: "U1", text: "hi" });
	const group = parseMessage("GROUP_AT_MESSAGE_CREATE", { id: "M2", author: { member_openid: "U2" }, content: " hello", group_openid: "G1" });
	assert.equal(group.chat_id, "group:G1");
	assert.equal(group.text, "hello");
	assert.throws(() => parseMessage("C2C_MESSAGE_CREATE", { id: "M1", author: {} }), /sender openid/);
	assert.throws(() => parseMessage("GROUP_AT_MESSAGE_CREATE", { id: "M1", author: { member_openid: "U" } }), /group_openid/);
	assert.equal(messagesPath("c2c:U1"), "/v2/users/U1/messages");
	assert.equal(messagesPath("group:G1"), "/v2/groups/G1/messages");
	assert.throws(() => messagesPath("group:../x"), /not a QQ chat id/);
	assert.equal(GROUP_AND_C2C_EVENT, 33554432);
});

test("qq/state.json: paired chats with QQ ids, anything else a sentence", () => {
	const chats: PairedChat[] = [{ chat_id: "c2c:ABC", role: "owner", name: "", paired_ms: 1 }];
	assert.deepEqual(readQqState(JSON.stringify({ version: 1, chats })), { chats });
	assert.equal(typeof readQqState(JSON.stringify({ version: 1, chats: [{ ...chats[0], chat_id: "42" }] })), "string");
	assert.equal(readQqState("{"), "it is not JSON");
});

// ---- the token ----

test("the token answer: string or number expires_in; no token is an auth error; refresh before expiry", () => {
	assert.deepEqual(readToken(`{"access_token":"T","expires_in":"7200"}`), { token: "T", lifeMs: 7_200_000 });
	assert.deepEqual(readToken(`{"access_token":"T","expires_in":60}`), { token: "T", lifeMs: 60_000 });
	assert.throws(() => readToken(`{"code":100016,"message":"invalid appid or secret"}`), /refused the app id or secret \(100016/, QqApiError);
	assert.throws(() => readToken(`{"access_token":"T"}`), /expires_in/);
	assert.throws(() => readToken(`<html>`), /not JSON/);
	assert.equal(refreshDelayMs(7_200_000), 7_200_000 - QQ_TOKEN_REFRESH_MARGIN_MS);
	assert.equal(refreshDelayMs(3000), 1500);
	assert.equal(refreshDelayMs(100), QQ_TOKEN_REFRESH_MIN_MS);
});

test("the API shares one token fetch, refreshes it before expiry, and hides the secret and tokens", async () => {
	const clock = new Clock();
	let issued = 0;
	const { http, requests } = fakeHttp((req) => {
		if (req.url.endsWith("/getAppAccessToken")) return ok(JSON.stringify({ access_token: `tok${++issued}xyz`, expires_in: 10 }));
		if (req.url.endsWith("/gateway")) return ok(`{"url":"wss://gw.example/websocket"}`);
		return new HttpError("status", "HTTP 500", { status: 500, body: `{"code":1,"message":"boom with tok${issued}xyz"}` });
	});
	const logs: string[] = [];
	const api = new QqApi({ http, appId: "A1", secret: "s3cr3t-value", apiUrl: "https://api.example/", tokenUrl: "https://tok.example/app/getAppAccessToken", timers: clock.timers, now: clock.now, log: (l) => logs.push(l) });
	const [a, b] = await Promise.all([api.token(), api.token()]);
	assert.equal(a, "tok1xyz");
	assert.equal(b, "tok1xyz");
	assert.equal(requests.length, 1, "one fetch for two callers");
	assert.deepEqual(JSON.parse(requests[0].body as string), { appId: "A1", clientSecret: "s3cr3t-value" });
	assert.equal(await api.gatewayUrl(), "wss://gw.example/websocket");
	assert.equal(requests[1].headers?.authorization, "QQBot tok1xyz");
	assert.equal(requests[1].url, "https://api.example/gateway");
	await clock.advance(5001); // half of a 10 s life
	assert.equal(issued, 2, "refreshed before it expired");
	assert.equal(await api.token(), "tok2xyz");
	let error: unknown;
	try { await api.send("/v2/users/U/messages", { content: "x" }); } catch (e) { error = e; }
	assert.ok(error instanceof QqApiError && error.status === 500);
	assert.ok(!(error as Error).message.includes("tok2xyz"), "the token is hidden");
	assert.equal(api.hide("s3cr3t-value tok1xyz tok2xyz"), `${SECRET_MASK} ${TOKEN_MASK} ${TOKEN_MASK}`);
	api.stop();
	assert.equal(clock.pending, 0, "stop leaves no timer");
});

test("a 401 from the token endpoint is an auth error without the secret", async () => {
	const clock = new Clock();
	const { http } = fakeHttp(() => new HttpError("status", "HTTP 401", { status: 401, body: `{"code":100016,"message":"bad s3cr3t-value"}` }));
	const api = new QqApi({ http, appId: "A1", secret: "s3cr3t-value", apiUrl: "https://api.example", tokenUrl: "https://tok.example/t", timers: clock.timers, now: clock.now, log: () => {} });
	let error: unknown;
	try { await api.token(); } catch (e) { error = e; }
	assert.ok(error instanceof QqApiError && error.kind === "auth", "auth");
	assert.ok(!(error as Error).message.includes("s3cr3t"));
});

// ---- the gateway ----

interface FakeSocket extends GatewaySocket {
	sent: Array<{ op: number; d: unknown }>;
	push(payload: object): void;
	drop(code?: number): void;
	/** The client failed the connection with this error (as net/websocket does on a message it cannot read). */
	fail(error: WebSocketError): void;
}

function gatewayRig() {
	const clock = new Clock();
	const sockets: FakeSocket[] = [];
	const notes: string[] = [];
	const dispatched: Array<[string, unknown]> = [];
	let tokens = 0;
	const gateway = new QqGateway({
		api: { token: async () => `T${++tokens}`, gatewayUrl: async () => "wss://gw.example/websocket" },
		open: (_url, onMessage) => {
			let resolveClosed!: (c: { code: number; reason: string; error?: Error }) => void;
			let open = true;
			const socket: FakeSocket = {
				opened: Promise.resolve(),
				closed: new Promise((r) => { resolveClosed = r; }),
				sent: [],
				send(text) { if (!open) throw new Error("closed"); socket.sent.push(JSON.parse(text)); },
				close(code = 1000) { if (open) { open = false; resolveClosed({ code, reason: "" }); } },
				abort() { socket.close(1006); },
				push(payload) { if (open) onMessage(JSON.stringify(payload)); },
				drop(code = 1006) { socket.close(code); },
				fail(error) { if (open) { open = false; resolveClosed({ code: error.closeCode ?? 1006, reason: "", error }); } },
			};
			sockets.push(socket);
			return socket;
		},
		intents: GROUP_AND_C2C_EVENT, timers: clock.timers, log: () => {}, notify: (l) => notes.push(l),
		onDispatch: (t, d) => dispatched.push([t, d]),
	});
	return { clock, sockets, notes, dispatched, gateway };
}

test("Hello -> Identify with the token and intent, heartbeats with the last seq, READY's session kept", async () => {
	const { clock, sockets, notes, dispatched, gateway } = gatewayRig();
	gateway.start();
	await flush();
	const ws = sockets[0];
	ws.push({ op: 10, d: { heartbeat_interval: 5000 } });
	await flush();
	assert.deepEqual(ws.sent[0], { op: 2, d: { token: "QQBot T1", intents: 1 << 25, shard: [0, 1], properties: { $os: "xsclaw", $browser: "xsclaw", $device: "xsclaw" } } });
	ws.push({ op: 0, s: 1, t: "READY", d: { session_id: "S1", user: { username: "bot" } } });
	await clock.advance(5000);
	assert.deepEqual(ws.sent[1], { op: 1, d: 1 });
	ws.push({ op: 11 });
	ws.push({ op: 0, s: 2, t: "C2C_MESSAGE_CREATE", d: { id: "M1" } });
	ws.push({ op: 0, s: 2, t: "C2C_MESSAGE_CREATE", d: { id: "M1" } });
	await clock.advance(5000);
	assert.deepEqual(ws.sent[2], { op: 1, d: 2 });
	assert.equal(dispatched.length, 1, "a repeated seq is dropped");
	assert.equal(gateway.sessionId, "S1");
	assert.ok(notes.some((n) => /connected as bot/.test(n)));
	// No ACK for that beat: the next one finds the link dead and the gateway reconnects and resumes.
	await clock.advance(5000);
	assert.equal(sockets.length, 1);
	await clock.advance(1000);
	assert.equal(sockets.length, 2, "a new connection after the back-off");
	sockets[1].push({ op: 10, d: { heartbeat_interval: 5000 } });
	await flush();
	assert.deepEqual(sockets[1].sent[0], { op: 6, d: { token: "QQBot T2", session_id: "S1", seq: 2 } });
	sockets[1].push({ op: 0, s: 2, t: "C2C_MESSAGE_CREATE", d: { id: "M1" } });
	sockets[1].push({ op: 0, s: 3, t: "C2C_MESSAGE_CREATE", d: { id: "M2" } });
	sockets[1].push({ op: 0, s: 4, t: "RESUMED", d: "" });
	await flush();
	assert.equal(dispatched.length, 2, "only the event after the seq is handled");
	assert.equal(gateway.seq, 4);
	await gateway.stop();
	assert.equal(clock.pending, 0, "no timer left");
});

test("op 7 reconnects at once and resumes; op 9 forgets the session and identifies; 4914 stops with a sentence", async () => {
	const { clock, sockets, notes, gateway } = gatewayRig();
	gateway.start();
	await flush();
	sockets[0].push({ op: 10, d: { heartbeat_interval: 30000 } });
	await flush();
	sockets[0].push({ op: 0, s: 1, t: "READY", d: { session_id: "S1" } });
	sockets[0].push({ op: 7 });
	await flush();
	assert.equal(sockets.length, 2, "reconnected without a wait");
	sockets[1].push({ op: 10, d: { heartbeat_interval: 30000 } });
	await flush();
	assert.equal(sockets[1].sent[0].op, 6);
	sockets[1].push({ op: 9, d: false });
	await flush();
	assert.equal(sockets.length, 3);
	sockets[2].push({ op: 10, d: { heartbeat_interval: 30000 } });
	await flush();
	assert.equal(sockets[2].sent[0].op, 2, "a fresh Identify after Invalid Session");
	sockets[2].push({ op: 0, s: 1, t: "READY", d: { session_id: "S2" } });
	await flush();
	sockets[2].drop(4914);
	await clock.advance(120_000);
	assert.equal(sockets.length, 3, "no reconnect after 4914");
	assert.equal(gateway.health, "stopped");
	assert.ok(notes.some((n) => /4914/.test(n) && /qq\.sandbox/.test(n)));
	await gateway.stop();
});

test("an event the connection cannot read (invalid UTF-8, 1007) is skipped on Resume, so it cannot hold up every later message", async () => {
	const { clock, sockets, dispatched, gateway } = gatewayRig();
	gateway.start();
	await flush();
	sockets[0].push({ op: 10, d: { heartbeat_interval: 30000 } });
	await flush();
	sockets[0].push({ op: 0, s: 1, t: "READY", d: { session_id: "S1" } });
	sockets[0].push({ op: 0, s: 2, t: "C2C_MESSAGE_CREATE", d: { id: "M1" } });
	await flush();
	sockets[0].fail(new WebSocketError("protocol", "the server sent a text message that is not valid UTF-8", 1007));
	await clock.advance(1000);
	assert.equal(sockets.length, 2);
	sockets[1].push({ op: 10, d: { heartbeat_interval: 30000 } });
	await flush();
	assert.deepEqual(sockets[1].sent[0], { op: 6, d: { token: "QQBot T2", session_id: "S1", seq: 3 } }, "resumed after the unreadable event 3");
	sockets[1].push({ op: 0, s: 4, t: "C2C_MESSAGE_CREATE", d: { id: "M3" } });
	await flush();
	assert.deepEqual(dispatched.map(([, d]) => (d as { id: string }).id), ["M1", "M3"]);
	// A plain drop still resumes from the last event read.
	sockets[1].drop(1006);
	for (let i = 0; i < 240 && sockets.length < 3; i++) await clock.advance(500);
	assert.equal(sockets.length, 3, "connected again after the back-off");
	sockets[2].push({ op: 10, d: { heartbeat_interval: 30000 } });
	await flush();
	assert.equal((sockets[2].sent[0].d as { seq: number }).seq, 4);
	await gateway.stop();
});

test("repeated failures back off, doubling up to the cap", async () => {
	const { clock, sockets, gateway } = gatewayRig();
	gateway.start();
	await flush();
	const times: number[] = [];
	for (let i = 0; i < 5; i++) {
		const n = sockets.length;
		sockets[n - 1].drop();
		times.push(clock.ms);
		for (let k = 0; k < 200 && sockets.length === n; k++) await clock.advance(250);
		assert.equal(sockets.length, n + 1);
	}
	const gaps = times.slice(1).map((t, i) => t - times[i]);
	for (let i = 1; i < gaps.length; i++) assert.ok(gaps[i] >= gaps[i - 1], `gaps grow: ${gaps.join(", ")}`);
	await gateway.stop();
});

// ---- the channel ----

function channelRig(options: { onCancel?: (id: number) => void } = {}) {
	const clock = new Clock();
	// hold(): sends wait until release() (a slow QQ).
	let held: Array<() => void> | undefined;
	const sent: Array<{ path: string; body: Record<string, unknown> }> = [];
	const published: InMessage[] = [];
	const store = { state: { chats: [] as PairedChat[] }, update(change: { chats: PairedChat[] }) { store.state = { ...store.state, ...change }; } };
	const pairing = new Pairing(store, clock.now, () => 0, "qq");
	let fail = 0;
	const channel = new QqChannel({
		api: {
			send: async (path, body) => {
				if (fail > 0) { fail--; throw new QqApiError("network", "down"); }
				sent.push({ path, body });
				if (held) await new Promise<void>((go) => held!.push(go));
				return {};
			},
		},
		router: { publish: async (m: InMessage): Promise<RouteOutcome> => { published.push(m); return { kind: "agent", request_id: published.length }; } },
		port: { cancel: async (id) => { options.onCancel?.(id); return options.onCancel ? id : 0; }, command: async () => ({ lines: ["ok"] }) },
		pairing, timers: clock.timers, now: clock.now, log: () => {}, notify: () => {},
	});
	const say = (id: string, user: string, text: string, group?: string) => channel.onDispatch(group ? "GROUP_AT_MESSAGE_CREATE" : "C2C_MESSAGE_CREATE",
		group ? { id, author: { member_openid: user }, group_openid: group, content: ` ${text}` } : { id, author: { user_openid: user }, content: text });
	const hold = () => { held = []; };
	const release = () => { const waiting = held ?? []; held = undefined; for (const go of waiting) go(); };
	return { clock, sent, published, pairing, channel, say, hold, release, failNext: (n: number) => { fail = n; } };
}

test("unpaired: a hint only; paired: the answer as passive replies with msg_seq 1.., cut at 5 replies", async () => {
	const { clock, sent, published, pairing, channel, say } = channelRig();
	say("M1", "U1", "hello");
	await clock.advance(10);
	assert.equal(published.length, 0, "nothing from an unpaired chat is published");
	assert.deepEqual(sent[0], { path: "/v2/users/U1/messages", body: { content: PAIRING_HINT, msg_type: 0, msg_id: "M1", msg_seq: 1 } });
	const code = pairing.newCode();
	say("M2", "U1", `/pair ${code}`);
	await clock.advance(10);
	assert.equal(pairing.roleOf("c2c:U1"), "owner");
	assert.equal(sent[1].body.msg_id, "M2");
	say("M3", "U1", "question");
	say("M3", "U1", "question");
	await clock.advance(10);
	assert.equal(published.length, 1, "a repeated message id is dropped");
	assert.equal(published[0].message_id, "M3");
	const long = "x".repeat(QQ_MESSAGE_MAX_CHARS * 7);
	channel.deliver({ type: "out_message", channel: "qq", chat_id: "c2c:U1", text: long, request_id: 1, correlation_id: "" });
	await clock.advance(10);
	const replies = sent.filter((s) => s.body.msg_id === "M3");
	assert.deepEqual(replies.map((r) => r.body.msg_seq), [1, 2, 3, 4, 5], "five replies, msg_seq 1-5");
	assert.ok(replies.every((r) => (r.body.content as string).length <= QQ_MESSAGE_MAX_CHARS));
	assert.match(replies[4].body.content as string, /cut: QQ allows 5 replies/);
	// M3 has no reply left: a further answer goes to the newest message that has one (M2, its second reply).
	channel.deliver({ type: "out_message", channel: "qq", chat_id: "c2c:U1", text: "more", request_id: 1, correlation_id: "" });
	await clock.advance(10);
	const more = sent.find((s) => s.body.content === "more");
	assert.deepEqual(more?.body, { content: "more", msg_type: 0, msg_id: "M2", msg_seq: 2 });
	await channel.stop();
});

test("a group's window closes after 5 minutes; a retried send keeps its msg_seq", async () => {
	const { clock, sent, pairing, channel, say, failNext } = channelRig();
	const code = pairing.newCode();
	say("G1", "U9", `/pair ${code}`, "GRP");
	await clock.advance(10);
	assert.equal(pairing.roleOf("group:GRP"), "owner");
	say("G2", "U9", "hi", "GRP");
	await clock.advance(10);
	failNext(1);
	channel.deliver({ type: "out_message", channel: "qq", chat_id: "group:GRP", text: "answer", request_id: 1, correlation_id: "" });
	await clock.advance(5000);
	const answer = sent.filter((s) => s.body.content === "answer");
	assert.equal(answer.length, 1);
	assert.equal(answer[0].path, "/v2/groups/GRP/messages");
	assert.equal(answer[0].body.msg_seq, 1, "the retry reused msg_seq 1");
	await clock.advance(QQ_GROUP_REPLY_WINDOW_MS);
	channel.deliver({ type: "out_message", channel: "qq", chat_id: "group:GRP", text: "late", request_id: 2, correlation_id: "" });
	await clock.advance(10);
	assert.ok(!sent.some((s) => s.body.content === "late"), "no reply after the window");
	await channel.stop();
});

test("/stop during a runaway: the replies waiting are dropped, the confirmation is the /stop message's first reply, and nothing more of the request follows", async () => {
	const late = () => channel.deliver({ type: "out_message", channel: "qq", chat_id: "c2c:U1", text: "late spam", request_id: 0, correlation_id: "" });
	const { clock, sent, pairing, channel, say, hold, release } = channelRig({ onCancel: () => late() });
	say("M1", "U1", `/pair ${pairing.newCode()}`);
	await clock.advance(10);
	say("M2", "U1", "spam me");
	await clock.advance(10);
	hold();
	for (let i = 0; i < 6; i++) channel.deliver({ type: "out_message", channel: "qq", chat_id: "c2c:U1", text: `spam ${i}`, request_id: 0, correlation_id: "" });
	await clock.advance(10);
	const before = sent.length;
	say("M3", "U1", "/stop");
	await clock.advance(10);
	channel.deliver({ type: "out_message", channel: "qq", chat_id: "c2c:U1", text: "request cancelled", request_id: 1, correlation_id: "M2" });
	release();
	await clock.advance(10);
	await clock.advance(10);
	const after = sent.slice(before).map((s) => s.body);
	assert.equal(after.length, 1, `only the confirmation: ${JSON.stringify(after)}`);
	assert.equal(after[0].msg_id, "M3");
	assert.equal(after[0].msg_seq, 1, "the /stop message's first reply");
	assert.match(String(after[0].content), /^Stopped \(request cancelled\)\. 5 waiting messages were dropped\.$/);
	assert.ok(channel.status().some((l) => /dropped after \/stop: 5 waiting replies, 2 late ones/.test(l)), channel.status().join("; "));
	await channel.stop();
});

// Fuzz tests of the QQ gateway's input path, run in XS on the release and the
// ASan/UBSan host: server frames (the WebSocket frame parser) carrying gateway
// payloads (the payload parser) carrying message events (the event reader),
// seeded, mutated, truncated and random at each layer, must end in a result or
// the layer's own error (WebSocketError, GatewayPayloadError) — never another
// exception, a crash or a hang; the gateway's state machine, fed random
// payloads on a fake socket, must stay bounded (no timer or socket left behind).
import { test, assert } from "testing";
import { generator, mutate, randomBytes, seedFor } from "test/fuzz";
import { QQ_PAYLOAD_MAX_BYTES, QQ_TEXT_MAX_CHARS } from "budgets";
import { decodeUtf8, encodeUtf8 } from "net/utf8";
import { FrameParser, Opcode } from "net/websocket/frame";
import { WebSocketError } from "net/websocket/types";
import { QqGateway, type GatewaySocket } from "channels/qq/gateway";
import { GatewayPayloadError, GROUP_AND_C2C_EVENT, parseGatewayPayload, parseMessage, readHello, readReady } from "channels/qq/payload";

/** The first seed of every loop here (--seed N replays another run). */
const SEED = seedFor(1);

const SEEDS = 300;


const VALID = [
	{ op: 10, d: { heartbeat_interval: 41250 } },
	{ op: 0, s: 1, t: "READY", d: { version: 1, session_id: "082ee18c-0be3", user: { id: "6158", username: "bot", bot: true }, shard: [0, 1] } },
	{ op: 0, s: 2, t: "C2C_MESSAGE_CREATE", d: { author: { user_openid: "E4F4AEA33253A2797FB897C50B81D7ED" }, content: "123 héllo 🌡", id: "ROBOT1.0_.b6nx.CVryAO0nR58RXuU6SC.m92gc19j02qKqdm8ek!", timestamp: "2023-11-06T13:37:18+08:00" } },
	{ op: 0, s: 3, t: "GROUP_AT_MESSAGE_CREATE", d: { author: { member_openid: "E4F4AEA3" }, content: " 123", group_openid: "C9F778FE", id: "ROBOT1.0_eBIy", timestamp: "2023-11-06T13:37:18+08:00" } },
	{ op: 0, s: 4, t: "RESUMED", d: "" },
	{ op: 11 }, { op: 7 }, { op: 9, d: false }, { op: 1, d: null },
].map((p) => JSON.stringify(p));


/** An unmasked server frame. */
function serverFrame(opcode: number, payload: Uint8Array, fin = true): Uint8Array {
	const n = payload.length;
	const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
	const out = new Uint8Array(head + n);
	out[0] = (fin ? 0x80 : 0) | opcode;
	if (n < 126) out[1] = n;
	else if (n < 65536) { out[1] = 126; out[2] = n >> 8; out[3] = n & 0xFF; }
	else { out[1] = 127; out[6] = (n / 16777216) & 0xFF; out[7] = (n >> 16) & 0xFF; out[8] = (n >> 8) & 0xFF; out[9] = n & 0xFF; }
	out.set(payload, head);
	return out;
}

const ODD_VALUES: unknown[] = [null, 0, -1, 1.5, 2 ** 60, "", "x", " ", "é🌡", true, [], {}, [1, "a"], { id: 1 }, "ROBOT1.0_x", "a".repeat(300)];

/** A valid payload with one field (at any depth) replaced by an odd value, or removed. */
function reshape(text: string, rand: (n: number) => number): string {
	const root = JSON.parse(text) as Record<string, unknown>;
	const objects: Record<string, unknown>[] = [];
	const walk = (v: unknown) => {
		if (v && typeof v === "object" && !Array.isArray(v)) {
			objects.push(v as Record<string, unknown>);
			for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k]);
		}
	};
	walk(root);
	const target = objects[rand(objects.length)];
	const keys = Object.keys(target);
	if (keys.length) {
		const key = keys[rand(keys.length)];
		if (rand(4) === 0) delete target[key];
		else target[key] = ODD_VALUES[rand(ODD_VALUES.length)];
	}
	return JSON.stringify(root);
}

let results = 0, refusals = 0;

// The channel's path for one gateway text: payload -> the reader for its op/t.
function readPayload(text: string): void {
	try {
		const p = parseGatewayPayload(text);
		if (p.op === 10) readHello(p.d);
		else if (p.t === "READY") readReady(p.d);
		else if (p.t === "C2C_MESSAGE_CREATE" || p.t === "GROUP_AT_MESSAGE_CREATE") {
			const m = parseMessage(p.t, p.d);
			assert.ok(m.text.length <= QQ_TEXT_MAX_CHARS && /^(c2c|group):/.test(m.chat_id));
		}
		results++;
	} catch (error) {
		if (!(error instanceof GatewayPayloadError)) throw error;
		refusals++;
	}
}

test("fuzz: gateway payloads, mutated, truncated and random, end in a payload or a GatewayPayloadError", () => {
	results = refusals = 0;
	for (const text of VALID) readPayload(text);
	assert.equal(refusals, 0, "the valid payloads are read");
	for (let seed = SEED; seed < SEED + SEEDS; seed++) {
		const rand = generator(seed);
		const valid = encodeUtf8(VALID[rand(VALID.length)]);
		readPayload(decodeUtf8(mutate(valid, rand)));
		readPayload(reshape(VALID[rand(VALID.length)], rand));
		readPayload(decodeUtf8(valid.slice(0, rand(valid.length))));
		readPayload(decodeUtf8(randomBytes(rand, 200)));
	}
	readPayload("x".repeat(QQ_PAYLOAD_MAX_BYTES + 1));
	readPayload(`{"op":0,"s":1,"t":"C2C_MESSAGE_CREATE","d":{"id":"M","author":{"user_openid":"U"},"content":"${"y".repeat(100_000)}"}}`);
	readPayload(`${"[".repeat(300)}${"]".repeat(300)}`);
	readPayload(`{"op":0,"s":1e400,"t":"X"}`);
	assert.ok(results > 50 && refusals > 50, `both outcomes seen (${results} read, ${refusals} refused)`);
});

test("fuzz: server frames carrying gateway payloads, mutated at the byte level and split anywhere, end in payloads or a WebSocketError", () => {
	let frames = 0, failures = 0;
	for (let seed = SEED; seed < SEED + SEEDS; seed++) {
		const rand = generator(seed + 7919);
		// A stream of frames: payloads (some fragmented), pings, then byte-level damage.
		const parts: Uint8Array[] = [];
		for (let k = 0; k < 1 + rand(4); k++) {
			const text = encodeUtf8(rand(3) ? VALID[rand(VALID.length)] : decodeUtf8(mutate(encodeUtf8(VALID[rand(VALID.length)]), rand)));
			if (rand(3) === 0 && text.length > 4) {
				const cut = 1 + rand(text.length - 1);
				parts.push(serverFrame(Opcode.Text, text.subarray(0, cut), false), serverFrame(Opcode.Continuation, text.subarray(cut)));
			} else parts.push(serverFrame(Opcode.Text, text));
			if (rand(4) === 0) parts.push(serverFrame(Opcode.Ping, new Uint8Array(rand(10))));
		}
		let total = 0;
		for (const p of parts) total += p.length;
		const stream = new Uint8Array(total);
		let at = 0;
		for (const p of parts) { stream.set(p, at); at += p.length; }
		const input = seed % 2 ? mutate(stream, rand) : stream;
		const parser = new FrameParser({
			onMessage: (opcode, bytes) => { frames++; if (opcode === Opcode.Text) readPayload(decodeUtf8(bytes)); },
			onControl: () => {},
		}, { maxMessageBytes: QQ_PAYLOAD_MAX_BYTES });
		try {
			let i = 0;
			while (i < input.length) {
				const n = 1 + rand(64);
				parser.feed(input.subarray(i, i + n));
				i += n;
			}
		} catch (error) {
			if (!(error instanceof WebSocketError)) throw error;
			failures++;
		}
		parser.release();
	}
	assert.ok(frames > 100 && failures > 10, `both outcomes seen (${frames} messages, ${failures} failed streams)`);
});

test("fuzz: the gateway fed random payloads stays bounded and leaves no timer or socket behind", async () => {
	const timers = new Map<number, () => void>();
	let next = 1;
	const clock = {
		set: (fn: () => void) => { const id = next++; timers.set(id, fn); return id; },
		clear: (id: unknown) => void timers.delete(id as number),
	};
	const open: Array<{ push(text: string): void; close(code?: number): void }> = [];
	let live = 0;
	const gateway = new QqGateway({
		api: { token: async () => "T", gatewayUrl: async () => "wss://gw.example/websocket" },
		open: (_url, onMessage) => {
			let resolveClosed!: (c: { code: number; reason: string }) => void;
			let isOpen = true;
			live++;
			const socket: GatewaySocket & { push(text: string): void } = {
				opened: Promise.resolve(),
				closed: new Promise((r) => { resolveClosed = r; }),
				send() { if (!isOpen) throw new Error("closed"); },
				close(code = 1000) { if (isOpen) { isOpen = false; live--; resolveClosed({ code, reason: "" }); } },
				abort() { socket.close(1006); },
				push(text) { if (isOpen) onMessage(text); },
			};
			open.push(socket);
			return socket;
		},
		intents: GROUP_AND_C2C_EVENT, timers: clock, log: () => {}, notify: () => {}, onDispatch: () => {},
	});
	gateway.start();
	const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
	await flush();
	for (let seed = SEED; seed < SEED + 200; seed++) {
		const rand = generator(seed + 104729);
		const valid = encodeUtf8(VALID[rand(VALID.length)]);
		open[open.length - 1].push(rand(2) ? VALID[rand(VALID.length)] : decodeUtf8(mutate(valid, rand)));
		await flush();
		// Fire one pending timer now and then (heartbeats, waits, back-offs), as time would.
		if (rand(3) === 0 && timers.size) {
			const [id, fn] = timers.entries().next().value as [number, () => void];
			timers.delete(id);
			fn();
			await flush();
		}
		assert.ok(live <= 1, "at most one socket open");
		assert.ok(timers.size <= 4, `timers stay bounded (${timers.size})`);
	}
	if (gateway.health !== "stopped") await gateway.stop();
	await flush();
	assert.equal(live, 0, "no socket left open");
	assert.equal(timers.size, 0, "no timer left");
});

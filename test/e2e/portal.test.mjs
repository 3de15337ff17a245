// The setup network on lin (issue 30), simulated as a board runs it: the
// firmware started with --http 0 on a fresh data folder (no Wi-Fi configured)
// answers DNS on 127.0.0.1 at the port it prints with its own address for every
// name (the captive portal), drops what is not a query and goes on answering;
// a phone's connectivity check is sent to the setup page. Once Wi-Fi is set
// (on lin the board is online at once) the captive DNS stops and the simulated
// mDNS answers xsclaw.local alone. One firmware for the file.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { Resolver } from "node:dns/promises";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APP_MAP } from "../../tools/build.mjs";
import { startFirmware } from "./firmware.mjs";
import { SANITIZER_ERROR } from "./xs.mjs";

const dir = mkdtempSync(join(tmpdir(), "xsclaw-portal-"));
const SERVING = /web: serving http:\/\/127\.0\.0\.1:(\d+)\//;
const CAPTIVE = /web: captive-portal DNS \(simulated on lin\) on 127\.0\.0\.1:(\d+): every name is 127\.0\.0\.1/;
const MDNS = /web: mDNS xsclaw\.local \(simulated on lin: answered on 127\.0\.0\.1:(\d+)\)/;
let fw, base, captivePort;

before(async () => {
	fw = startFirmware(["--modules", APP_MAP, "--data", dir, "--http", "0"], "release");
	await fw.until(CAPTIVE);
	base = `http://127.0.0.1:${SERVING.exec(fw.printed())[1]}`;
	captivePort = Number(CAPTIVE.exec(fw.printed())[1]);
});

after(async () => {
	if (fw) {
		const result = await fw.end();
		assert.equal(result.code, 0, result.stderr.slice(-2000));
		assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
	}
	rmSync(dir, { recursive: true, force: true });
});

function resolver(port) {
	const r = new Resolver({ timeout: 1500, tries: 1 });
	r.setServers([`127.0.0.1:${port}`]);
	return r;
}

/** Sends raw bytes to the port; resolves with the first answer, or undefined after ms. */
function raw(port, bytes, ms = 500) {
	return new Promise((resolve) => {
		const socket = createSocket("udp4");
		const done = (value) => {
			clearTimeout(timer);
			socket.close();
			resolve(value);
		};
		const timer = setTimeout(() => done(undefined), ms);
		socket.on("message", (message) => done(message));
		socket.on("error", () => done(undefined));
		socket.send(bytes, port, "127.0.0.1");
	});
}

test("no Wi-Fi configured: every name is the board (the captive portal), junk is dropped, a connectivity check goes to the setup page", async () => {
	const r = resolver(captivePort);
	assert.deepEqual(await r.resolve4("connectivitycheck.gstatic.com"), ["127.0.0.1"]);
	assert.deepEqual(await r.resolve4("captive.apple.com"), ["127.0.0.1"]);
	const answer = await r.resolve4("www.msftconnecttest.com", { ttl: true });
	assert.equal(answer[0].ttl, 30, "WEB_DNS_TTL_S");
	await assert.rejects(r.resolve6("example.com"), { code: "ENODATA" }, "AAAA: no data");
	assert.equal(await raw(captivePort, Buffer.from("not a dns query at all")), undefined, "junk gets no answer");
	assert.equal(await raw(captivePort, Buffer.alloc(600, 1)), undefined, "an oversized packet gets no answer");
	assert.deepEqual(await r.resolve4("still.answering.example"), ["127.0.0.1"], "and it goes on answering");
	const probe = await fetch(`${base}/generate_204`, { redirect: "manual" });
	assert.equal(probe.status, 302);
	assert.equal(probe.headers.get("location"), `${base}/setup`);
	const apple = await fetch(`${base}/hotspot-detect.html`, { redirect: "manual" });
	assert.equal(apple.status, 302);
	const status = await fw.run("web status", /captive-portal DNS on port \d+: \d+ answered, \d+ dropped/);
	const [, answered, dropped] = /(\d+) answered, (\d+) dropped/.exec(status).map(Number);
	assert.ok(answered >= 5 && dropped >= 2, status);
	await fw.run("wifi ap", /wifi: setup network xsclaw-\w{4}, WPA2 password \S{12} \(simulated on lin\): join it and open the web console/);
});

test("Wi-Fi configured and online: the setup network and its DNS stop, mDNS answers xsclaw.local alone, the probe is not redirected", async () => {
	const from = fw.stdout.length;
	fw.send("config set wifi.ssid home-net");
	await fw.until(MDNS, { from });
	assert.match(fw.printed(from), /wifi: setup network closed \(the board is online\)/);
	const mdnsPort = Number(MDNS.exec(fw.printed(from))[1]);
	const r = resolver(mdnsPort);
	assert.deepEqual(await r.resolve4("xsclaw.local"), ["127.0.0.1"]);
	await assert.rejects(r.resolve4("printer.local"), { code: "ENOTFOUND" }, "another name: NXDOMAIN");
	await assert.rejects(resolver(captivePort).resolve4("connectivitycheck.gstatic.com"), "the captive DNS is closed");
	const probe = await fetch(`${base}/generate_204`, { redirect: "manual" });
	assert.equal(probe.status, 404);
	await fw.run("web status", /web: mDNS xsclaw\.local/);
	await fw.run("wifi ap", /off \(Wi-Fi is configured\)/);
});

// wifi/station and wifi/console over a scripted radio: joining from config,
// back-off on failure and loss, SNTP before name lookups go out, the lookup
// gate's bounds, and the commands on a board and on lin.
import { test, assert } from "testing";
import type { AccessPoint, LinkEvent } from "host/network";
import { WifiStation, type NetworkBoard } from "wifi/station";
import { wifiCommands } from "wifi/console";
import {
	ONLINE_WAIT_MAX_MS, ONLINE_WAITERS_MAX, SNTP_RETRY_MS, WIFI_RECONNECT_FIRST_MS, WIFI_RECONNECT_MAX_MS,
} from "budgets";
import { FakeTimers } from "./core_fakes";

class FakeRadio implements NetworkBoard {
	kind: "radio" | "host" = "radio";
	joins: Array<{ ssid: string; password: string }> = [];
	onLink?: (event: LinkEvent) => void;
	clock = false;
	timeRequests: Array<(error?: string) => void> = [];
	disconnects = 0;
	found: AccessPoint[] | undefined = [];
	connect(ssid: string, password: string, onLink: (event: LinkEvent) => void): void {
		this.joins.push({ ssid, password });
		this.onLink = onLink;
	}
	disconnect(): void { this.disconnects++; }
	scan(onDone: (found: AccessPoint[] | undefined, error?: string) => void): void { onDone(this.found, "the radio is busy"); }
	link() { return undefined; }
	syncTime(_host: string, onDone: (error?: string) => void): void { this.timeRequests.push(onDone); }
	clockSet(): boolean { return this.clock; }
}

function setup(settings: Record<string, string> = { "wifi.ssid": "home", "wifi.password": "password1" }, kind: "radio" | "host" = "radio") {
	const radio = new FakeRadio();
	radio.kind = kind;
	const timers = new FakeTimers();
	const lines: string[] = [];
	const changes: string[] = [];
	const values = new Map(Object.entries(settings));
	const config = { get: (name: string) => values.get(name), set: (name: string, value: string) => void values.set(name, value), unset: (name: string) => values.delete(name) };
	const station = new WifiStation({ network: radio, settings: config, timer: timers, log: (line) => void lines.push(line), onChange: (state) => void changes.push(state) });
	return { radio, timers, lines, changes, values, config, station };
}

function gateOutcome(station: WifiStation): { result: string } {
	const outcome = { result: "waiting" };
	station.gate(() => { outcome.result = "ready"; }, () => { outcome.result = "failed"; });
	return outcome;
}

test("start joins wifi.ssid with wifi.password; connected, then the clock, then lookups go", () => {
	const { radio, station, lines } = setup();
	station.start();
	assert.deepEqual(radio.joins, [{ ssid: "home", password: "password1" }]);
	const lookup = gateOutcome(station);
	assert.equal(lookup.result, "waiting");
	radio.onLink!({ type: "connected", address: "192.168.1.7" });
	assert.equal(radio.timeRequests.length, 1, "SNTP asked once online");
	assert.equal(lookup.result, "waiting", "no lookup before the clock is set");
	radio.clock = true;
	radio.timeRequests[0]();
	assert.equal(lookup.result, "ready");
	assert.equal(gateOutcome(station).result, "ready", "later lookups go at once");
	assert.ok(lines.includes("wifi: connected to home, address 192.168.1.7"), lines.join("|"));
	assert.ok(lines.some((l) => /clock set/.test(l)));
});

test("a failed join is retried with doubling back-off up to the cap", () => {
	const { radio, station, timers, lines } = setup();
	station.start();
	const delays: number[] = [];
	for (let i = 0; i < 10; i++) {
		radio.onLink!({ type: "disconnected", reason: "wrong password" });
		const joins = radio.joins.length;
		let waited = 0;
		while (radio.joins.length === joins && waited <= WIFI_RECONNECT_MAX_MS) { timers.advance(250); waited += 250; }
		delays.push(waited);
	}
	assert.equal(delays[0], WIFI_RECONNECT_FIRST_MS);
	assert.equal(delays[1], 2 * WIFI_RECONNECT_FIRST_MS);
	assert.equal(delays[2], 4 * WIFI_RECONNECT_FIRST_MS);
	assert.equal(delays[9], WIFI_RECONNECT_MAX_MS, `capped: ${delays.join(",")}`);
	assert.ok(lines.some((l) => /not connected to home: wrong password; retrying in 1 s/.test(l)), lines.join("|"));
	assert.equal(station.state, "joining");
});

test("a lost link is rejoined and the back-off starts over after a success", () => {
	const { radio, station, timers } = setup();
	station.start();
	radio.onLink!({ type: "disconnected", reason: "no AP" });
	timers.advance(WIFI_RECONNECT_FIRST_MS);
	radio.onLink!({ type: "disconnected", reason: "no AP" });
	timers.advance(2 * WIFI_RECONNECT_FIRST_MS);
	radio.onLink!({ type: "connected", address: "10.0.0.2" });
	assert.equal(station.state, "online");
	radio.onLink!({ type: "disconnected", reason: "the access point dropped the connection" });
	const joins = radio.joins.length;
	timers.advance(WIFI_RECONNECT_FIRST_MS);
	assert.equal(radio.joins.length, joins + 1, "first delay again");
});

test("a failed time request is asked again; lookups wait meanwhile", () => {
	const { radio, station, timers } = setup();
	station.start();
	radio.onLink!({ type: "connected", address: "10.0.0.2" });
	const lookup = gateOutcome(station);
	radio.timeRequests[0]("no time from pool.ntp.org");
	timers.advance(SNTP_RETRY_MS);
	assert.equal(radio.timeRequests.length, 2);
	assert.equal(lookup.result, "waiting");
});

test("lookups fail at once when no network is configured, after ONLINE_WAIT_MAX_MS otherwise, and beyond ONLINE_WAITERS_MAX", () => {
	const none = setup({});
	none.station.start();
	assert.equal(gateOutcome(none.station).result, "failed");
	assert.ok(none.lines.includes("wifi: not configured: set it with wifi set SSID PASSWORD"));
	const { station, timers } = setup();
	station.start();
	const held = Array.from({ length: ONLINE_WAITERS_MAX }, () => gateOutcome(station));
	assert.equal(gateOutcome(station).result, "failed", "one too many");
	timers.advance(ONLINE_WAIT_MAX_MS);
	assert.ok(held.every((o) => o.result === "failed"));
});

test("onChange hears each change of the online state once: waiting while joining, online with the clock, waiting again on a lost link", () => {
	const { radio, station, changes, timers } = setup();
	assert.equal(station.onlineState(), "offline", "nothing joined yet");
	station.start();
	radio.onLink!({ type: "connected", address: "10.0.0.2" });
	assert.deepEqual(changes, ["waiting"], "connected without the clock is still waiting");
	radio.clock = true;
	radio.timeRequests[0]();
	radio.onLink!({ type: "disconnected", reason: "the access point dropped the connection" });
	timers.advance(WIFI_RECONNECT_FIRST_MS);
	assert.deepEqual(changes, ["waiting", "online", "waiting"]);
	const none = setup({});
	none.station.start();
	assert.deepEqual(none.changes, [], "offline from the start is no change");
	assert.equal(none.station.onlineState(), "offline");
});

test("on lin (kind host) nothing is driven and lookups go at once", () => {
	const { radio, station } = setup({}, "host");
	station.start();
	assert.equal(radio.joins.length, 0);
	assert.equal(gateOutcome(station).result, "ready");
	assert.equal(station.onlineState(), "online");
	assert.match(station.statusLine(), /none on lin/);
});

test("wifi set: a name with spaces in quotes; unquoted spaces are refused and nothing is saved; quotes are not kept", async () => {
	const { radio, station, values, config } = setup({});
	station.start();
	const commands = wifiCommands({ station, network: radio, settings: config });
	await assert.rejects(() => runCommand(commands, "wifi set", "My Home Net pass word"), /with spaces goes in quotes, e\.g\. wifi set "My Home Net" "pass word" \(nothing was saved\)/);
	assert.equal(values.has("wifi.ssid"), false, "nothing was saved");
	assert.equal(radio.joins.length, 0);
	await runCommand(commands, "wifi set", '"My Home Net" "pass word"');
	assert.equal(values.get("wifi.ssid"), "My Home Net", "the quotes are not part of the name");
	assert.equal(values.get("wifi.password"), "pass word");
	await runCommand(commands, "wifi set", "'Net \\\\ \"5G\"'");
	assert.equal(values.get("wifi.ssid"), 'Net \\\\ "5G"', "single quotes keep what is inside as typed");
	await runCommand(commands, "wifi set", '"Cafe \\"Bleu\\"" pa"ss\'word');
	assert.equal(values.get("wifi.ssid"), 'Cafe "Bleu"', "inside double quotes \\\" is a quote");
	assert.equal(values.get("wifi.password"), "pa\"ss'word", "a quote inside a word is a character");
	await assert.rejects(() => runCommand(commands, "wifi set", '"My Home Net password1'), /quote is not closed/);
	await assert.rejects(() => runCommand(commands, "wifi set", '"" password1'), /the SSID is empty/);
	await assert.rejects(() => runCommand(commands, "wifi set", '"a" "b" "c"'), /3 words/);
	assert.equal(values.get("wifi.ssid"), 'Cafe "Bleu"', "a refused line changed nothing");
});

function runCommand(commands: ReturnType<typeof wifiCommands>, name: string, args: string): Promise<string[]> {
	const lines: string[] = [];
	const command = commands.find((c) => c.name === name)!;
	return Promise.resolve().then(() => command.run(args, { line: (l) => void lines.push(l) })).then(() => lines);
}

test("wifi set stores the network and joins it; the line is secret; bad passwords are refused", async () => {
	const { radio, station, values, config } = setup({});
	station.start();
	const commands = wifiCommands({ station, network: radio, settings: config });
	assert.equal(commands.find((c) => c.name === "wifi set")!.secret!("x y"), true);
	const lines = await runCommand(commands, "wifi set", "office 'pass word 9'");
	assert.equal(values.get("wifi.ssid"), "office");
	assert.equal(values.get("wifi.password"), "pass word 9", "a password may hold spaces");
	assert.deepEqual(radio.joins.at(-1), { ssid: "office", password: "pass word 9" });
	assert.match(lines[0], /joining it/);
	await assert.rejects(() => runCommand(commands, "wifi set", "office short"), /8 to 63 characters/);
	await runCommand(commands, "wifi set", "cafe");
	assert.equal(values.has("wifi.password"), false, "an open network has no password");
});

test("wifi scan lists each network once, strongest first; a failed scan is an error sentence", async () => {
	const { radio, station, config } = setup();
	const commands = wifiCommands({ station, network: radio, settings: config });
	radio.found = [{ ssid: "b", rssi: -70, channel: 6 }, { ssid: "a", rssi: -40, channel: 1 }, { ssid: "b", rssi: -50, channel: 11 }, { ssid: "", rssi: -30, channel: 3 }];
	assert.deepEqual(await runCommand(commands, "wifi scan", ""), ["a  -40 dBm  channel 1", "b  -50 dBm  channel 11"]);
	radio.found = undefined;
	await assert.rejects(() => runCommand(commands, "wifi scan", ""), /the radio is busy/);
});

test("on lin the wifi commands say what a board would do", async () => {
	const { radio, station, config, values } = setup({}, "host");
	const commands = wifiCommands({ station, network: radio, settings: config });
	assert.match((await runCommand(commands, "wifi set", "home password1"))[0], /a board would join it now/);
	assert.equal(values.get("wifi.ssid"), "home");
	assert.match((await runCommand(commands, "wifi scan", ""))[0], /no radio/);
	assert.match((await runCommand(commands, "wifi status", ""))[0], /none on lin/);
});

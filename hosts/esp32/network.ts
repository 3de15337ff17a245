// host/network on the ESP32-S3 (declaration: typings/shared/network.d.ts): the
// Wi-Fi station over the SDK's embedded:network/interface/wifi, and the clock
// over its sntp module. modules/main/wifi decides when to connect, retry and ask
// for the time; this only drives the radio and reports what it does.
import WiFi from "embedded:network/interface/wifi";
import type { AccessPoint, LinkEvent } from "host/network";
import SNTP from "sntp";
import Time from "time";
import { CLOCK_VALID_AFTER_MS } from "budgets";

/** embedded:network/interface/wifi's connection codes: below 400 not joined, 500 has an address. */
const CONNECTION_JOINED = 400, CONNECTION_ADDRESS = 500;

export const kind = "radio";

let station: WiFi | undefined;
let joined: string | undefined;

export function connect(ssid: string, password: string, onLink: (event: LinkEvent) => void): void {
	disconnect();
	let online = false;
	const wifi: WiFi = new WiFi({
		onChanged() {
			if (station !== wifi) return;
			const connection = wifi.connection;
			if (connection >= CONNECTION_ADDRESS && !online) {
				online = true;
				joined = ssid;
				onLink({ type: "connected", address: wifi.address ?? "" });
			} else if (connection < CONNECTION_JOINED && online) {
				online = false;
				joined = undefined;
				onLink({ type: "disconnected", reason: "the access point dropped the connection" });
			} else if (connection < CONNECTION_JOINED && !online) {
				onLink({ type: "disconnected", reason: "the network did not accept the connection (check the SSID and password)" });
			}
		},
	});
	station = wifi;
	wifi.connect(password ? { SSID: ssid, password } : { SSID: ssid });
}

export function disconnect(): void {
	const wifi = station;
	station = joined = undefined;
	if (!wifi) return;
	try { wifi.disconnect(); } finally { wifi.close(); }
}

export function scan(onDone: (found: AccessPoint[] | undefined, error?: string) => void): void {
	const found: AccessPoint[] = [];
	try {
		const wifi = station ?? new WiFi({});
		wifi.scan({
			onFound: (result) => void found.push({ ssid: result.SSID, rssi: result.RSSI, channel: result.channel }),
			onComplete: () => {
				if (wifi !== station) wifi.close();
				onDone(found);
			},
		});
	} catch (error) {
		onDone(undefined, `the radio cannot scan now (${error instanceof Error ? error.message : String(error)}); try again in a few seconds`);
	}
}

export function link(): { ssid: string; address: string; rssi: number } | undefined {
	if (!station || !joined || station.connection < CONNECTION_ADDRESS) return undefined;
	return { ssid: joined, address: station.address ?? "", rssi: station.RSSI ?? 0 };
}

export function syncTime(host: string, onDone: (error?: string) => void): void {
	new SNTP({ host }, (message, value) => {
		if (message === SNTP.time && value !== undefined) {
			Time.set(value);
			onDone();
		} else if (message === SNTP.error) {
			onDone(`no time from ${host}`);
		}
		// SNTP.retry: it tries the next server by itself.
	});
}

export function clockSet(): boolean {
	return Date.now() >= CLOCK_VALID_AFTER_MS;
}

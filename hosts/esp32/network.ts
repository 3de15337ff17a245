// host/network on the ESP32-S3 (declaration: typings/shared/network.d.ts): the
// Wi-Fi station over the SDK's embedded:network/interface/wifi, and the clock
// over its sntp module. modules/main/wifi decides when to connect, retry and ask
// for the time; this only drives the radio and reports what it does.
//
// The setup network (issue 30) is the SDK's wifi module's access point, WPA2
// (WiFi.accessPoint with a password; WIFI_AUTH_WPA_WPA2_PSK), then the station
// beside it (WiFi.mode station | accessPoint: APSTA, so the setup page can scan
// and join), closed by switching the radio to station only (WiFi.mode), which
// keeps the station's link. It
// opens only before the station was first used (at start, with no Wi-Fi
// configured): the two SDK modules share the radio, and the access point's
// module sets the radio up only when it is the first. mDNS (xsclaw.local and
// the web console as _http._tcp) is the SDK's embedded:network/dnssd over its
// embedded:io/socket/udp.
import WiFi from "embedded:network/interface/wifi";
import SetupNetwork from "wifi";
import type { AccessPointOptions, WiFiMode } from "wifi";
import DNSSD from "embedded:network/dnssd";
import UDP from "embedded:io/socket/udp";
import Net from "net";
import type { AccessPoint, LinkEvent } from "host/network";
import SNTP from "sntp";
import Time from "time";
import { CLOCK_VALID_AFTER_MS, WEB_AP_MAX_STATIONS } from "budgets";

/** embedded:network/interface/wifi's connection codes: below 400 not joined, 500 has an address. */
const CONNECTION_JOINED = 400, CONNECTION_ADDRESS = 500;

export const kind = "radio";

let station: WiFi | undefined;
let joined: string | undefined;
/** Whether a station object was ever made: the access point can no longer be the radio's first user. */
let stationMade = false;
let accessPoint: string | undefined;
/** ESP-IDF's default address of the access point's interface. */
const ACCESS_POINT_ADDRESS = "192.168.4.1";

export function connect(ssid: string, password: string, onLink: (event: LinkEvent) => void): void {
	disconnect();
	let online = false;
	stationMade = true;
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
		stationMade = true;
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

export function openAccessPoint(ssid: string, password: string): string {
	if (accessPoint) return accessPoint;
	if (stationMade) throw new Error("the setup network opens only at start: unset wifi.ssid and reboot");
	const options: AccessPointOptions = { ssid, password, max: WEB_AP_MAX_STATIONS };
	try {
		// The access point first (its module sets the radio up with both interfaces), then the station beside it (APSTA) to scan and join.
		SetupNetwork.accessPoint(options);
		SetupNetwork.mode = (SetupNetwork.Mode.station | SetupNetwork.Mode.accessPoint) as WiFiMode;
	} catch (error) {
		throw new Error(`the setup network did not open (${error instanceof Error ? error.message : String(error)})`);
	}
	let address = ACCESS_POINT_ADDRESS;
	try {
		address = Net.get("IP", "ap") || ACCESS_POINT_ADDRESS;
	} catch {
		// the interface's default stays
	}
	accessPoint = address;
	return address;
}

export function closeAccessPoint(): void {
	if (!accessPoint) return;
	accessPoint = undefined;
	SetupNetwork.mode = SetupNetwork.Mode.station;
}

export function advertise(host: string, port: number, onError: (message: string) => void): () => void {
	let dnssd: DNSSD | undefined;
	try {
		const service = new DNSSD({ socket: { io: UDP } });
		dnssd = service;
		service.claim({
			host,
			onReady: () => void service.advertise({ serviceType: "_http._tcp", host, name: host, port }),
			onError: () => onError(`${host}.local is taken by another device on this network`),
		});
	} catch (error) {
		dnssd?.close();
		dnssd = undefined;
		onError(`mDNS did not start (${error instanceof Error ? error.message : String(error)})`);
	}
	return () => {
		dnssd?.close();
		dnssd = undefined;
	};
}

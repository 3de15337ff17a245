// wifi/console: the `wifi` commands. `wifi set` stores the network in config
// (the password as a secret: masked, kept out of the console history) and
// joins it at once; `wifi status` and `wifi scan` report the station. On lin,
// which has no radio, each says what a board would do.
import { UsageError, quotedWords, type Command } from "console/types";
import { PASSWORD_SETTING, SSID_SETTING, type NetworkBoard, type WifiStation } from "wifi/station";
import {
	WIFI_PASSWORD_MAX_BYTES, WIFI_PASSWORD_MIN_BYTES, WIFI_SCAN_MAX_RESULTS, WIFI_SSID_MAX_BYTES,
} from "budgets";

export interface WifiCommandOptions {
	station: WifiStation;
	network: Pick<NetworkBoard, "kind" | "scan">;
	settings: { set(name: string, value: string): void; unset(name: string): boolean };
}

const bytes = (text: string) => ArrayBuffer.fromString(text).byteLength;

export function wifiCommands({ station, network, settings }: WifiCommandOptions): Command[] {
	return [
		{
			name: "wifi set",
			usage: "SSID [PASSWORD]",
			help: "join a Wi-Fi network (kept across restarts; no password for an open network; a name or password with spaces in quotes: wifi set \"My Home Net\" \"pass word\")",
			secret: () => true,
			run(args, out) {
				const { words: given, quoted } = quotedWords(args);
				if (!given.length || given.length > 2) {
					if (given.length > 2 && !quoted) throw new Error(`that is ${given.length} words; an SSID or password with spaces goes in quotes, e.g. wifi set "My Home Net" "pass word" (nothing was saved)`);
					if (given.length > 2) throw new Error(`that is ${given.length} words after the quotes; give the SSID and the password, each with spaces in quotes (nothing was saved)`);
					throw new UsageError();
				}
				const [ssid, password = ""] = given;
				if (!ssid) throw new Error("the SSID is empty; give the network's name (nothing was saved)");
				if (bytes(ssid) > WIFI_SSID_MAX_BYTES) throw new Error(`an SSID has at most ${WIFI_SSID_MAX_BYTES} bytes; check the network's name`);
				if (password && (password.length < WIFI_PASSWORD_MIN_BYTES || bytes(password) > WIFI_PASSWORD_MAX_BYTES))
					throw new Error(`a WPA2 password has ${WIFI_PASSWORD_MIN_BYTES} to ${WIFI_PASSWORD_MAX_BYTES} characters; check it and set it again`);
				settings.set(SSID_SETTING, ssid);
				if (password) settings.set(PASSWORD_SETTING, password);
				else settings.unset(PASSWORD_SETTING);
				if (network.kind === "host") {
					out.line(`ok: saved ${ssid}${password ? " with its password" : " (open network)"}; a board would join it now. The lin host uses the host's network.`);
					return;
				}
				out.line(`ok: saved ${ssid}; joining it (wifi status shows how it goes)`);
				station.restart();
			},
		},
		{
			name: "wifi status",
			usage: "",
			help: "the Wi-Fi link, address, signal and clock",
			run(args, out) {
				if (args) throw new UsageError();
				out.line(station.statusLine());
			},
		},
		{
			name: "wifi scan",
			usage: "",
			help: "list the Wi-Fi networks in range, strongest first",
			run(args, out) {
				if (args) throw new UsageError();
				if (network.kind === "host") {
					out.line("the lin host has no radio to scan with; a board lists the Wi-Fi networks in range here, strongest first");
					return;
				}
				return new Promise<void>((resolve, reject) => {
					network.scan((found, error) => {
						if (!found) return reject(new Error(error ?? "the scan failed; try again"));
						if (!found.length) out.line("no networks in range");
						const best = new Map<string, { rssi: number; channel: number }>();
						for (const ap of found) if (ap.ssid && (best.get(ap.ssid)?.rssi ?? -Infinity) < ap.rssi) best.set(ap.ssid, ap);
						const sorted = [...best].sort((a, b) => b[1].rssi - a[1].rssi).slice(0, WIFI_SCAN_MAX_RESULTS);
						for (const [ssid, ap] of sorted) out.line(`${ssid}  ${ap.rssi} dBm  channel ${ap.channel}`);
						resolve();
					});
				});
			},
		},
	];
}

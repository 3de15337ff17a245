// channels/web/ap: the setup network of a board with no Wi-Fi configured (issue
// 30): its name (xsclaw-XXXX) and a random WPA2 password made once per board
// and kept in the key-value store (NVS on the board), printed on the serial
// console at start and by `wifi ap`; never an open network. While wifi.ssid is
// unset the setup page is served without a login: the password is the gate.
// On lin the access point is simulated (the host is on its network already):
// the same name, password and setup flow, no radio.
import { WEB_AP_PASSWORD_CHARS } from "budgets";
import type { KeyValueStore } from "config/store";
import { encodeUtf8, decodeUtf8 } from "net/utf8";
import { randomCode } from "util/random";

const ALPHABET = "23456789abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ";

export interface SetupNetworkCredentials {
	ssid: string;
	password: string;
}

function stored(store: KeyValueStore, key: string): string | undefined {
	const value = store.read(key);
	if (value === undefined) return undefined;
	return typeof value === "string" ? value : decodeUtf8(new Uint8Array(value));
}

function bytesOf(text: string): ArrayBuffer {
	const bytes = new Uint8Array(encodeUtf8(text)); // a copy of its own: its buffer is exactly it
	return bytes.buffer as ArrayBuffer;
}

/** The board's setup network, made at the first call and kept. */
export function setupNetworkCredentials(store: KeyValueStore): SetupNetworkCredentials {
	let ssid = stored(store, "ssid"), password = stored(store, "password");
	if (!ssid || !password || password.length < WEB_AP_PASSWORD_CHARS) {
		ssid = `xsclaw-${randomCode("0123456789ABCDEF", 4)}`;
		password = randomCode(ALPHABET, WEB_AP_PASSWORD_CHARS);
		store.write("ssid", bytesOf(ssid));
		store.write("password", bytesOf(password));
	}
	return { ssid, password };
}

// host/network: the board's Wi-Fi radio and clock, which modules/main/wifi drives.
// The device implements it over the SDK's embedded:network/interface/wifi and
// sntp modules (hosts/esp32/network.ts); the lin host has no radio: it is on
// the host's network from the start and its clock is already set
// (hosts/lin/modules/network.ts), so the wifi commands say what a board would do.
declare module "host/network" {
	export interface AccessPoint {
		ssid: string;
		rssi: number;      // dBm
		channel: number;
	}
	export type LinkEvent =
		| { type: "connected"; address: string }
		| { type: "disconnected"; reason: string };
	/** "radio": a Wi-Fi station the firmware must connect; "host": already online (lin). */
	export const kind: "radio" | "host";
	/** Starts joining ssid; events come through onLink. Replaces an earlier connect. */
	export function connect(ssid: string, password: string, onLink: (event: LinkEvent) => void): void;
	/** Leaves the network; no more events. Idempotent. */
	export function disconnect(): void;
	/** Lists the networks in range; onDone gets them (or an error sentence) once. */
	export function scan(onDone: (found: AccessPoint[] | undefined, error?: string) => void): void;
	/** The link now: undefined when not connected. */
	export function link(): { ssid: string; address: string; rssi: number } | undefined;
	/** Asks host for the time and sets the clock; onDone(error sentence) once, undefined on success. */
	export function syncTime(host: string, onDone: (error?: string) => void): void;
	/** Whether the wall clock holds a real date (after SNTP, or always on lin). */
	export function clockSet(): boolean;
	/**
	 * The setup network (issue 30): opens a WPA2 access point named ssid beside
	 * the station (so it can still scan and join); returns the board's address
	 * on it. Throws a sentence when it cannot. On lin nothing opens: "127.0.0.1".
	 */
	export function openAccessPoint(ssid: string, password: string): string;
	/** Closes the setup network; the station keeps its link. Idempotent. */
	export function closeAccessPoint(): void;
	/**
	 * Claims HOST.local by mDNS on the board's network and advertises the web
	 * console there (_http._tcp on port); returns what stops it. onError gets a
	 * sentence (the name is taken, the socket failed). On lin: nothing (the web
	 * channel simulates the name on 127.0.0.1).
	 */
	export function advertise(host: string, port: number, onError: (message: string) => void): () => void;
}

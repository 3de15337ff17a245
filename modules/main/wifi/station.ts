// wifi/station: the board's way onto the network, decided here and driven
// through host/network. It joins the network named by wifi.ssid/wifi.password
// at start and when `wifi set` changes them, retries a failed or lost link
// with doubling back-off (WIFI_RECONNECT_FIRST_MS .. WIFI_RECONNECT_MAX_MS,
// forever: a board has no one to give up to), sets the clock by SNTP once
// online, and holds name lookups (net/online's OnlineGate) until both are done,
// so the first TLS connection checks its certificate against a real date.
// Each change is one status line on the console. On lin (network kind "host")
// the process is online from the start and nothing is driven.
import type { AccessPoint, LinkEvent } from "host/network";
import { OnlineWaiters } from "net/online";
import type { OnlineState } from "net/types";
import type { TimerLike } from "net/types";
import { SNTP_RETRY_MS, SNTP_SERVER, WIFI_RECONNECT_FIRST_MS, WIFI_RECONNECT_MAX_MS } from "budgets";

/** What the station drives: host/network's shape. */
export interface NetworkBoard {
	readonly kind: "radio" | "host";
	connect(ssid: string, password: string, onLink: (event: LinkEvent) => void): void;
	disconnect(): void;
	scan(onDone: (found: AccessPoint[] | undefined, error?: string) => void): void;
	link(): { ssid: string; address: string; rssi: number } | undefined;
	syncTime(host: string, onDone: (error?: string) => void): void;
	clockSet(): boolean;
}

/** The settings the station reads (config/store's Config has this shape). */
export interface WifiSettings {
	get(name: string): string | undefined;
}

export interface StationOptions {
	network: NetworkBoard;
	settings: WifiSettings;
	timer: TimerLike;
	/** One status line for the console. */
	log(line: string): void;
	/** Told when onlineState() changes (the agent machine's lookups follow it). */
	onChange?(state: OnlineState): void;
	/** Told when the link comes up or goes: an address on the network, the clock set or not (the web console's setup network closes then). */
	onLink?(up: boolean): void;
}

export const SSID_SETTING = "wifi.ssid";
export const PASSWORD_SETTING = "wifi.password";

export type LinkState = "host" | "unconfigured" | "joining" | "online" | "retrying";

export class WifiStation {
	#o: StationOptions;
	#state: LinkState;
	#attempt = 0;          // failed joins since the last success: the back-off's exponent
	#retry: unknown;       // reconnect timer
	#clockRetry: unknown;  // SNTP retry timer
	#syncing = false;
	#generation = 0;       // bumped by every connect: late events of an older link are ignored
	#waiters: OnlineWaiters;
	#told: OnlineState;
	#address = "";
	#lastError = "";
	#linkTold = false;

	constructor(options: StationOptions) {
		this.#o = options;
		this.#state = options.network.kind === "host" ? "host" : "unconfigured";
		this.#waiters = new OnlineWaiters(options.timer, () => this.onlineState());
		this.#told = this.onlineState();
		this.#linkTold = this.linked();
	}

	get state(): LinkState { return this.#state; }

	/** Joins the configured network, if any. */
	start(): void {
		if (this.#state === "host") return;
		const ssid = this.#o.settings.get(SSID_SETTING);
		if (!ssid) {
			this.#o.log("wifi: not configured: set it with wifi set SSID PASSWORD");
			this.#changed();
			return;
		}
		this.#join(ssid);
	}

	/** Joins again with the settings as they are now (after `wifi set`). */
	restart(): void {
		if (this.#state === "host") return;
		this.#stop();
		this.#attempt = 0;
		this.start();
	}

	/** Whether the board has an address on its network (lin: always). */
	linked(): boolean {
		return this.#state === "online" || this.#state === "host";
	}

	/** Whether lookups may go out now. */
	online(): boolean {
		return this.#state === "host" || (this.#state === "online" && this.#o.network.clockSet());
	}

	/** online: lookups go now; waiting: joining or retrying; offline: nothing configured. */
	onlineState(): OnlineState {
		return this.online() ? "online" : this.#state === "unconfigured" ? "offline" : "waiting";
	}

	/** net/online's gate over this station's state: lookups wait for Wi-Fi and the clock. */
	gate = (ready: () => void, fail: () => void): void => this.#waiters.gate(ready, fail);

	/** The `wifi status` and `status` line. */
	statusLine(): string {
		const clock = this.#o.network.clockSet() ? "clock set" : this.#syncing ? "clock: asking " + SNTP_SERVER : "clock not set";
		switch (this.#state) {
			case "host": return "wifi: none on lin (the host's network is used; a board joins wifi.ssid)";
			case "unconfigured": return "wifi: not configured: set it with wifi set SSID PASSWORD";
			case "joining": return `wifi: joining ${this.#o.settings.get(SSID_SETTING)}`;
			case "retrying": return `wifi: not connected (${this.#lastError}); retrying`;
			case "online": {
				const link = this.#o.network.link();
				return `wifi: connected to ${link?.ssid ?? this.#o.settings.get(SSID_SETTING)}, address ${link?.address ?? this.#address}${link ? `, signal ${link.rssi} dBm` : ""}; ${clock}`;
			}
		}
	}

	#join(ssid: string): void {
		const generation = ++this.#generation;
		this.#state = "joining";
		this.#changed();
		this.#o.log(`wifi: joining ${ssid}`);
		this.#o.network.connect(ssid, this.#o.settings.get(PASSWORD_SETTING) ?? "", (event) => {
			if (generation === this.#generation) this.#onLink(ssid, event);
		});
	}

	#onLink(ssid: string, event: LinkEvent): void {
		if (event.type === "connected") {
			this.#state = "online";
			this.#attempt = 0;
			this.#address = event.address;
			this.#o.log(`wifi: connected to ${ssid}, address ${event.address}`);
			this.#syncClock();
			this.#settle();
			return;
		}
		this.#state = "retrying";
		this.#changed();
		this.#lastError = event.reason;
		const delay = Math.min(WIFI_RECONNECT_FIRST_MS * 2 ** Math.min(this.#attempt, 16), WIFI_RECONNECT_MAX_MS);
		this.#attempt++;
		this.#o.log(`wifi: not connected to ${ssid}: ${event.reason}; retrying in ${Math.round(delay / 1000)} s`);
		this.#clear(this.#retry);
		this.#retry = this.#o.timer.set(() => {
			this.#retry = undefined;
			this.#o.network.disconnect();
			this.start();
		}, delay);
	}

	#syncClock(): void {
		if (this.#syncing || this.#o.network.clockSet()) return;
		this.#syncing = true;
		const generation = this.#generation;
		this.#o.network.syncTime(SNTP_SERVER, (error) => {
			this.#syncing = false;
			if (generation !== this.#generation || this.#state !== "online") return;
			if (!error) {
				this.#o.log(`wifi: clock set from ${SNTP_SERVER}`);
				this.#settle();
				return;
			}
			this.#o.log(`wifi: ${error}; asking again in ${SNTP_RETRY_MS / 1000} s`);
			this.#clockRetry = this.#o.timer.set(() => { this.#clockRetry = undefined; this.#syncClock(); }, SNTP_RETRY_MS);
		});
	}

	/** Lets the waiting lookups go once online with the clock set. */
	#settle(): void {
		this.#waiters.settle();
		this.#changed();
	}

	/** Tells onChange when the online state differs from what it was last told. */
	#changed(): void {
		const up = this.linked();
		if (up !== this.#linkTold) {
			this.#linkTold = up;
			this.#o.onLink?.(up);
		}
		const state = this.onlineState();
		if (state === this.#told) return;
		this.#told = state;
		this.#o.onChange?.(state);
	}

	#clear(timer: unknown): void {
		if (timer !== undefined) this.#o.timer.clear(timer);
	}

	#stop(): void {
		this.#generation++;
		this.#clear(this.#retry);
		this.#clear(this.#clockRetry);
		this.#retry = this.#clockRetry = undefined;
		this.#syncing = false;
		this.#o.network.disconnect();
		this.#state = "unconfigured";
		this.#changed();
	}
}

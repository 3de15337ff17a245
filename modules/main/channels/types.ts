// channels/types: what a chat channel is to the firmware (issue 27). A channel
// is a folder under channels/ whose setup module exports a ChannelDefinition,
// and one line in channels/all; main.ts knows none by name. The firmware opens
// each with the main machine's parts (ChannelContext), binds it to the router
// under its name (the router hands it every outbound event of its chats),
// adds its console commands, starts it after boot, stops it before a reboot,
// and tells the agent machine which channels run (send_message's targets).
// Telegram, QQ and the console implement it; so does the test channel
// (test/channel).
import type { Command } from "console/types";
import type { SettingsSource } from "config/settings";
import type { ChannelInfo } from "agent/protocol";
import type { OutEvent } from "core/types";
import type { HttpTransport } from "net/types";
import type { RouteTable } from "httpd/types";
import type { OpenWebSocket } from "net/websocket/types";
import type { RouteIn } from "router/types";
import type { WipedDirectory } from "util/files";
import type { Directory } from "util/io";

/** A channel's waits (channels/sleeps). */
export interface Timers {
	set(callback: () => void, ms: number): unknown;
	clear(id: unknown): void;
}

/** The router as a channel uses it, its one way to the agent: publish what a person sent, cancel a chat's requests (/stop), run a chat's commands (/session). */
export type ChannelRouter = Pick<RouteIn, "publish" | "cancel" | "command">;

/** The main machine's parts a channel may use. */
export interface ChannelContext {
	/** Every setting (a channel reads its own; a change of one of its settings restarts it). */
	config: SettingsSource;
	/** The main machine's HTTP client (name lookups wait for Wi-Fi). */
	http: HttpTransport;
	/** Opens a WebSocket on the main machine's sockets (net/websocket/board). */
	openSocket: OpenWebSocket;
	/** The storage root: a channel keeps its files in its own directory there. */
	files: Directory;
	/** The one way in: what a person sent, a /stop, a chat command all pass through the router. */
	router: ChannelRouter;
	/** The board's Wi-Fi link: whether it has an address on its network (lin: always), and a call at each change. */
	link: { up(): boolean; watch(callback: (up: boolean) => void): void };
	/** The HTTP server's routes (the web channel serves them; the web console and /mcp add theirs). */
	routes: RouteTable;
	/** Runs a console command line as the owner at the serial console would (the web console's pages); its output lines, or the error sentence. */
	console: { run(line: string): Promise<{ lines: string[]; error?: string }> };
	timers: Timers;
	/** Monotonic ms. */
	now(): number;
	/** Log lines (stderr on lin). */
	log(line: string): void;
	/** A line for the person at the console (connected, paired, stopped and why). */
	notify(line: string): void;
	/** Called by a channel when its info() may have changed (started, stopped, a chat paired or revoked). */
	changed(): void;
	/** Sends a text for the owner alone (a web login code) to every running channel's owner's private chats; where it went ("telegram chat 42"). */
	toOwner(text: string): string[];
}

/** A chat channel the firmware runs. Methods other than stop and restart must not throw. */
export interface ChatChannel {
	/** Its name in requests, events, bindings and its console commands ("telegram", "qq", "console"). */
	readonly name: string;
	/** Its console commands (a paired channel's: NAME status | pair | list | revoke | restart). */
	readonly commands: readonly Command[];
	/** Its directories under the storage root, wiped by factory-reset. */
	readonly directories: readonly WipedDirectory[];
	/** A sentence when it could not open (its storage): it stays off. */
	readonly warning?: string;
	/** Starts when its settings let it (after boot; a change of its settings restarts it by itself). */
	start(): void;
	/** Stops it; resolves when nothing of it runs (no socket, timer or poll left). */
	stop(): Promise<void>;
	/** Stops and starts it again; resolves true when it runs. */
	restart(): Promise<boolean>;
	/** Whether it runs, why not, and its paired chats: what the agent's send_message checks. */
	info(): ChannelInfo;
	/** An outbound event for one of its chats (from the router). Never throws; what it drops it logs. */
	deliver(event: OutEvent): void;
	/** A paired channel: sends text to its owner's private chats (never a user's or a group) while it runs; the chats it went to. Never throws. */
	toOwner?(text: string): string[];
}

/** A channel as channels/all lists it. */
export interface ChannelDefinition {
	readonly name: string;
	open(context: ChannelContext): ChatChannel;
}

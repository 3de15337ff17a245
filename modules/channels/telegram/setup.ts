// channels/telegram/setup: the Telegram channel for main.ts, from settings:
//   telegram.token          the bot token from BotFather (secret: masked everywhere)
//   telegram.enabled        "false" keeps the channel off while a token is set (default on)
//   telegram.base_url       the Bot API's address (default https://api.telegram.org; tests use the mock)
//   telegram.poll_timeout_s getUpdates' long-poll wait (default TELEGRAM_POLL_TIMEOUT_S)
// A change of any of them restarts the channel. It also gives the console its
// `telegram` commands (status, pair, list, revoke, restart) and prints a pairing
// code at start while no chat is paired. The settings are declared (types,
// ranges, defaults, the token secret) in config/settings.
import type { Directory } from "util/io";
import { TELEGRAM_PAIR_CODE_TTL_MS } from "budgets";
import { settingValue } from "config/settings";
import type { Config } from "config/store";
import { UsageError, words, type Command } from "console/types";
import type { HttpTransport } from "net/types";
import { isLoopback, parseUrl } from "net/url";
import type { Router } from "router/router";
import type { AgentPort } from "router/types";
import { messageOf } from "util/errors";
import { BotApi, DEFAULT_BASE_URL } from "channels/telegram/api";
import { CHANNEL, TelegramChannel, type Timers } from "channels/telegram/channel";
import { Pairing } from "channels/telegram/pairing";
import { StateFile } from "channels/telegram/store";

export const TELEGRAM_SETTINGS = Object.freeze(["telegram.token", "telegram.enabled", "telegram.base_url", "telegram.poll_timeout_s"]);
export const TELEGRAM_DIRECTORY = "telegram";

export interface TelegramSetupOptions {
	config: Config;
	http: HttpTransport;
	/** The storage root. */
	files: Directory;
	router: Router;
	port: Pick<AgentPort, "cancel" | "command">;
	timers: Timers;
	now(): number;
	log(line: string): void;
	/** A line for the person at the console. */
	notify(line: string): void;
}

export interface TelegramSetup {
	commands: Command[];
	/** Starts the channel when the settings allow; prints a pairing code when no chat is paired. */
	start(): void;
	stop(): Promise<void>;
	/** A sentence when the channel's storage could not be opened. */
	warning?: string;
}

function openDirectory(files: Directory): Directory {
	files.createDirectory(TELEGRAM_DIRECTORY);
	return files.openDirectory({ path: TELEGRAM_DIRECTORY });
}

export function openTelegram(options: TelegramSetupOptions): TelegramSetup {
	const { config, log, notify } = options;
	let state: StateFile;
	try {
		state = new StateFile(openDirectory(options.files), log);
	} catch (error) {
		const warning = `the Telegram channel cannot open its storage (${messageOf(error)}), so it stays off; check the storage, then reboot`;
		return { commands: [], start() {}, stop: async () => {}, warning };
	}
	const pairing = new Pairing(state, options.now);
	let channel: TelegramChannel | undefined;
	let unbind: (() => void) | undefined;
	let stopping: Promise<void> = Promise.resolve();

	const printCode = () => {
		const code = pairing.newCode();
		notify(`telegram: pairing code ${code} (valid ${TELEGRAM_PAIR_CODE_TTL_MS / 60_000} min): send /pair ${code} to the bot from the chat to pair`);
	};
	const setting = (name: string) => settingValue((n) => config.get(n), name);
	// The api masks the token in every message it makes; log lines pass through it once more.
	const startChannel = () => {
		let token: string | undefined, baseUrl: string, timeout: number;
		try {
			token = setting("telegram.token");
			if (!token || setting("telegram.enabled") === "false") return;
			baseUrl = setting("telegram.base_url") ?? DEFAULT_BASE_URL;
			timeout = Number(setting("telegram.poll_timeout_s"));
			if (!parseUrl(baseUrl).secure && !isLoopback(parseUrl(baseUrl).host)) {
				throw new Error(`telegram.base_url is plain http:// to ${parseUrl(baseUrl).host}, so the bot token would cross the network unencrypted: use https://`);
			}
		} catch (error) {
			notify(`telegram: off: ${messageOf(error)}`);
			return;
		}
		const api = new BotApi(options.http, token, baseUrl);
		const current = new TelegramChannel({
			api, router: options.router, port: options.port, pairing, state, timers: options.timers, now: options.now,
			log: (line) => log(api.hide(line)), notify: (line) => notify(api.hide(line)),
			pollTimeoutS: timeout,
		});
		channel = current;
		unbind = options.router.bind(CHANNEL, current);
		current.start();
		// Nobody paired yet: the code to pair with is on the console at once.
		if (!pairing.list().length) printCode();
	};
	const stopChannel = (): Promise<void> => {
		const current = channel;
		channel = undefined;
		unbind?.();
		unbind = undefined;
		stopping = current ? current.stop() : Promise.resolve();
		return stopping;
	};
	const restart = async () => {
		await stopChannel();
		startChannel();
	};
	config.onChange((name) => {
		if (TELEGRAM_SETTINGS.includes(name)) restart().catch((error) => log(`telegram: restart failed: ${messageOf(error)}`));
	});
	const noArgs = (args: string) => {
		if (words(args).length) throw new UsageError();
	};
	const commands: Command[] = [
		{
			name: "telegram status", usage: "", help: "the Telegram channel: connection, offset, paired chats, requests in flight",
			run(args, out) {
				noArgs(args);
				if (!setting("telegram.token")) out.line("telegram: off (no token: `config set telegram.token TOKEN` from BotFather)");
				else if (setting("telegram.enabled") === "false") out.line("telegram: off (telegram.enabled is false)");
				else for (const line of channel?.status() ?? ["telegram: stopped"]) out.line(line);
				out.line(`paired chats: ${pairing.list().length}; pairing code: ${pairing.codeSecondsLeft() ? `valid ${pairing.codeSecondsLeft()} s more` : "none"}`);
			},
		},
		{
			name: "telegram pair", usage: "", help: "print a new one-time pairing code (send /pair CODE to the bot)",
			run(args) {
				noArgs(args);
				printCode();
			},
		},
		{
			name: "telegram list", usage: "", help: "the paired chats: id, role, name, when",
			run(args, out) {
				noArgs(args);
				const chats = pairing.list();
				if (!chats.length) out.line("no chat is paired: `telegram pair` prints a code");
				for (const c of chats) out.line(`${c.chat_id} ${c.role} ${c.name || "-"} ${new Date(c.paired_ms).toISOString().slice(0, 16).replace("T", " ")}`);
			},
		},
		{
			name: "telegram revoke", usage: "CHAT", help: "unpair a chat (it gets only the pairing hint from then on)",
			run(args, out) {
				const list = words(args);
				if (list.length !== 1) throw new UsageError();
				if (!pairing.revoke(list[0])) throw new Error(`chat ${list[0]} is not paired: \`telegram list\` shows the paired chats`);
				out.line(`chat ${list[0]} is no longer paired`);
			},
		},
		{
			name: "telegram restart", usage: "", help: "stop and start the Telegram channel (after fixing the token or the network)",
			async run(args, out) {
				noArgs(args);
				await restart();
				out.line(channel ? "telegram: restarted" : "telegram: off (set telegram.token, and telegram.enabled is not false)");
			},
		},
	];
	return {
		commands,
		start() {
			startChannel();
		},
		async stop() {
			await stopChannel();
			await stopping;
		},
	};
}

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
import { settingValue } from "config/settings";
import type { Config } from "config/store";
import type { Command } from "console/types";
import { channelCommands, pairingCodeLine, restartOnChange } from "channels/console";
import type { HttpTransport } from "net/types";
import { isLoopback, parseUrl } from "net/url";
import type { Router } from "router/router";
import type { AgentPort } from "router/types";
import { messageOf } from "util/errors";
import { BotApi, DEFAULT_BASE_URL } from "channels/telegram/api";
import { CHANNEL, TelegramChannel, type Timers } from "channels/telegram/channel";
import { Pairing } from "channels/pairing";
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
		notify(pairingCodeLine("telegram", pairing.newCode()));
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
	restartOnChange(config, TELEGRAM_SETTINGS, "telegram", restart, log);
	const commands = channelCommands({
		name: "telegram", title: "Telegram", pairing, printCode,
		status: () => {
			if (!setting("telegram.token")) return ["telegram: off (no token: `config set telegram.token TOKEN` from BotFather)"];
			if (setting("telegram.enabled") === "false") return ["telegram: off (telegram.enabled is false)"];
			return channel?.status() ?? ["telegram: stopped"];
		},
		restart: async () => {
			await restart();
			return channel !== undefined;
		},
		offHint: "set telegram.token, and telegram.enabled is not false",
	});
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

// channels/telegram/setup: the Telegram channel's definition (channels/all),
// from settings:
//   telegram.token          the bot token from BotFather (secret: masked everywhere)
//   telegram.enabled        "false" keeps the channel off while a token is set (default on)
//   telegram.base_url       the Bot API's address (default https://api.telegram.org; tests use the mock)
//   telegram.poll_timeout_s getUpdates' long-poll wait (default TELEGRAM_POLL_TIMEOUT_S)
// A change of any of them restarts the channel; its console commands (status,
// pair, list, revoke, restart) and the pairing code at start are the paired
// channels' lifecycle (channels/lifecycle). The settings are declared (types,
// ranges, defaults, the token secret) in config/settings.
import { settingValue } from "config/settings";
import { isLoopback, parseUrl } from "net/url";
import { messageOf } from "util/errors";
import type { Directory } from "util/io";
import { closedChannel, pairedChannel, watchedPairingStore } from "channels/lifecycle";
import { Pairing } from "channels/pairing";
import type { ChannelContext, ChannelDefinition, ChatChannel } from "channels/types";
import { BotApi, DEFAULT_BASE_URL } from "channels/telegram/api";
import { CHANNEL, TelegramChannel } from "channels/telegram/channel";
import { StateFile } from "channels/telegram/store";

export const TELEGRAM_SETTINGS = Object.freeze(["telegram.token", "telegram.enabled", "telegram.base_url", "telegram.poll_timeout_s"]);
export const TELEGRAM_DIRECTORY = "telegram";
const DIRECTORY = Object.freeze({ path: TELEGRAM_DIRECTORY, what: "Telegram pairing" });

function openDirectory(files: Directory): Directory {
	files.createDirectory(TELEGRAM_DIRECTORY);
	return files.openDirectory({ path: TELEGRAM_DIRECTORY });
}

function openTelegram(context: ChannelContext): ChatChannel {
	const { config, log, notify } = context;
	let state: StateFile;
	try {
		state = new StateFile(openDirectory(context.files), log);
	} catch (error) {
		return closedChannel(CHANNEL, DIRECTORY, `the Telegram channel cannot open its storage (${messageOf(error)}), so it stays off; check the storage, then reboot`);
	}
	const pairing = new Pairing(watchedPairingStore(state, () => context.changed()), context.now);
	const setting = (name: string) => settingValue((n) => config.get(n), name);
	return pairedChannel({
		name: CHANNEL, title: "Telegram", settings: TELEGRAM_SETTINGS, directory: DIRECTORY, pairing,
		off: () => {
			if (!setting("telegram.token")) return "off (no token: `config set telegram.token TOKEN` from BotFather)";
			if (setting("telegram.enabled") === "false") return "off (telegram.enabled is false)";
			return undefined;
		},
		offHint: "set telegram.token, and telegram.enabled is not false",
		// The api masks the token in every message it makes; log lines pass through it once more.
		run() {
			const token = setting("telegram.token") as string;
			const baseUrl = setting("telegram.base_url") ?? DEFAULT_BASE_URL;
			const timeout = Number(setting("telegram.poll_timeout_s"));
			if (!parseUrl(baseUrl).secure && !isLoopback(parseUrl(baseUrl).host)) {
				throw new Error(`telegram.base_url is plain http:// to ${parseUrl(baseUrl).host}, so the bot token would cross the network unencrypted: use https://`);
			}
			const api = new BotApi(context.http, token, baseUrl);
			const channel = new TelegramChannel({
				api, router: context.router, port: context.router, pairing, state, timers: context.timers, now: context.now,
				log: (line) => log(api.hide(line)), notify: (line) => notify(api.hide(line)),
				pollTimeoutS: timeout,
			});
			channel.start();
			return channel;
		},
	}, context);
}

export const telegram: ChannelDefinition = { name: CHANNEL, open: openTelegram };

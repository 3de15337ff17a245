// channels/qq/setup: the QQ channel's definition (channels/all), from settings (declared in config/settings):
//   qq.app_id, qq.app_secret  the bot's AppID and AppSecret from q.qq.com (secret: masked everywhere)
//   qq.sandbox                true: QQ's sandbox API (sandbox.api.sgroup.qq.com)
//   qq.enabled                "false" keeps the channel off while the credentials are set
//   qq.api_url, qq.token_url  other servers (tests use tools/mock-qq; plain http only to this machine)
// A change of any of them restarts the channel; its `qq` commands and the
// pairing code at start are the paired channels' lifecycle (channels/lifecycle).
// The paired chats live in qq/state.json (channels/state).
import { QQ_STATE_FILE_MAX_BYTES } from "budgets";
import { settingValue } from "config/settings";
import { isLoopback, parseUrl } from "net/url";
import { messageOf } from "util/errors";
import { closedChannel, pairedChannel, watchedPairingStore } from "channels/lifecycle";
import { Pairing, readPairedChats, type PairedChat } from "channels/pairing";
import { ChannelStateFile, readVersioned } from "channels/state";
import type { ChannelContext, ChannelDefinition, ChatChannel } from "channels/types";
import { DEFAULT_API_URL, QqApi, SANDBOX_API_URL } from "channels/qq/api";
import { CHANNEL, QqChannel } from "channels/qq/channel";
import { QqGateway } from "channels/qq/gateway";
import { GROUP_AND_C2C_EVENT } from "channels/qq/payload";

export const QQ_SETTINGS = Object.freeze(["qq.app_id", "qq.app_secret", "qq.sandbox", "qq.enabled", "qq.api_url", "qq.token_url"]);
export const QQ_DIRECTORY = "qq";

export interface QqState {
	chats: PairedChat[];
}

/** qq/state.json's text -> the state, or a sentence on what is wrong. */
export function readQqState(text: string): QqState | string {
	const json = readVersioned(text);
	if (typeof json === "string") return json;
	const chats = readPairedChats(json.chats, /^(c2c|group):[0-9A-Za-z_-]{1,128}$/);
	return typeof chats === "string" ? chats : { chats };
}

function checkUrl(name: string, url: string): void {
	const parsed = parseUrl(url);
	if (!parsed.secure && !isLoopback(parsed.host)) throw new Error(`${name} is plain http:// to ${parsed.host}, so the token would cross the network unencrypted: use https://`);
}

const DIRECTORY = Object.freeze({ path: QQ_DIRECTORY, what: "QQ pairing" });

function openQq(context: ChannelContext): ChatChannel {
	const { config, log, notify } = context;
	let state: ChannelStateFile<QqState>;
	try {
		context.files.createDirectory(QQ_DIRECTORY);
		state = new ChannelStateFile(context.files.openDirectory({ path: QQ_DIRECTORY }), {
			name: "qq", maxBytes: QQ_STATE_FILE_MAX_BYTES, read: readQqState, empty: { chats: [] }, warn: log,
		});
	} catch (error) {
		return closedChannel(CHANNEL, DIRECTORY, `the QQ channel cannot open its storage (${messageOf(error)}), so it stays off; check the storage, then reboot`);
	}
	const pairing = new Pairing(watchedPairingStore(state, () => context.changed()), context.now, undefined, "qq");
	const setting = (name: string) => settingValue((n) => config.get(n), name);
	return pairedChannel({
		name: CHANNEL, title: "QQ", settings: QQ_SETTINGS, directory: DIRECTORY, pairing,
		off: () => {
			if (!setting("qq.app_id") || !setting("qq.app_secret")) return "off (no credentials: `config set qq.app_id ID` and `config set qq.app_secret SECRET` from q.qq.com)";
			if (setting("qq.enabled") === "false") return "off (qq.enabled is false)";
			return undefined;
		},
		offHint: "set qq.app_id and qq.app_secret, and qq.enabled is not false",
		run() {
			const appId = setting("qq.app_id") as string;
			const secret = setting("qq.app_secret") as string;
			const apiUrl = setting("qq.api_url") ?? (setting("qq.sandbox") === "true" ? SANDBOX_API_URL : DEFAULT_API_URL);
			const tokenUrl = setting("qq.token_url") as string;
			checkUrl("qq.api_url", apiUrl);
			checkUrl("qq.token_url", tokenUrl);
			const api = new QqApi({ http: context.http, appId, secret, apiUrl, tokenUrl, timers: context.timers, now: context.now, log: (line) => log(api.hide(line)) });
			const hidden = (line: string) => api.hide(line);
			let gateway: QqGateway;
			const channel = new QqChannel({
				api, router: context.router, port: context.router, pairing, timers: context.timers, now: context.now,
				log: (line) => log(hidden(line)), notify: (line) => notify(hidden(line)),
				health: () => ({ health: gateway.health, username: gateway.username, problem: gateway.lastProblem }),
			});
			gateway = new QqGateway({
				api, open: context.openSocket, intents: GROUP_AND_C2C_EVENT, timers: context.timers,
				log: (line) => log(hidden(line)), notify: (line) => notify(hidden(line)),
				onDispatch: (t, d) => channel.onDispatch(t, d),
			});
			gateway.start();
			return {
				status: () => channel.status(),
				deliver: (event) => channel.deliver(event),
				async stop() {
					api.stop();
					await Promise.all([gateway.stop(), channel.stop()]);
				},
			};
		},
	}, context);
}

export const qq: ChannelDefinition = { name: CHANNEL, open: openQq };

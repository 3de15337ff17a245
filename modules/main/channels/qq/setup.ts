// channels/qq/setup: the QQ channel for main.ts, from settings (declared in config/settings):
//   qq.app_id, qq.app_secret  the bot's AppID and AppSecret from q.qq.com (secret: masked everywhere)
//   qq.sandbox                true: QQ's sandbox API (sandbox.api.sgroup.qq.com)
//   qq.enabled                "false" keeps the channel off while the credentials are set
//   qq.api_url, qq.token_url  other servers (tests use tools/mock-qq; plain http only to this machine)
// A change of any of them restarts the channel. It also gives the console its
// `qq` commands (channels/console) and prints a pairing code at start while no
// chat is paired. The paired chats live in qq/state.json (channels/state).
import type { Directory } from "util/io";
import { QQ_STATE_FILE_MAX_BYTES } from "budgets";
import { settingValue } from "config/settings";
import type { Config } from "config/store";
import type { Command } from "console/types";
import type { HttpTransport } from "net/types";
import { isLoopback, parseUrl } from "net/url";
import type { Router } from "router/router";
import type { AgentPort } from "router/types";
import { messageOf } from "util/errors";
import { channelCommands, pairingCodeLine, restartOnChange } from "channels/console";
import { Pairing, readPairedChats, type PairedChat } from "channels/pairing";
import { ChannelStateFile, readVersioned } from "channels/state";
import { DEFAULT_API_URL, QqApi, SANDBOX_API_URL, type Timers } from "channels/qq/api";
import { CHANNEL, QqChannel } from "channels/qq/channel";
import { QqGateway, type OpenSocket } from "channels/qq/gateway";
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

export interface QqSetupOptions {
	config: Config;
	http: HttpTransport;
	/** Opens the gateway's WebSocket (net/board's boardWebSocket). */
	openSocket: OpenSocket;
	/** The storage root. */
	files: Directory;
	router: Router;
	port: Pick<AgentPort, "cancel" | "command">;
	timers: Timers;
	now(): number;
	log(line: string): void;
	notify(line: string): void;
}

export interface QqSetup {
	commands: Command[];
	start(): void;
	stop(): Promise<void>;
	warning?: string;
}

function checkUrl(name: string, url: string): void {
	const parsed = parseUrl(url);
	if (!parsed.secure && !isLoopback(parsed.host)) throw new Error(`${name} is plain http:// to ${parsed.host}, so the token would cross the network unencrypted: use https://`);
}

export function openQq(options: QqSetupOptions): QqSetup {
	const { config, log, notify } = options;
	let state: ChannelStateFile<QqState>;
	try {
		options.files.createDirectory(QQ_DIRECTORY);
		state = new ChannelStateFile(options.files.openDirectory({ path: QQ_DIRECTORY }), {
			name: "qq", maxBytes: QQ_STATE_FILE_MAX_BYTES, read: readQqState, empty: { chats: [] }, warn: log,
		});
	} catch (error) {
		return { commands: [], start() {}, stop: async () => {}, warning: `the QQ channel cannot open its storage (${messageOf(error)}), so it stays off; check the storage, then reboot` };
	}
	const pairing = new Pairing(state, options.now, undefined, "qq");
	let running: { api: QqApi; gateway: QqGateway; channel: QqChannel; unbind: () => void } | undefined;
	let stopping: Promise<void> = Promise.resolve();
	const setting = (name: string) => settingValue((n) => config.get(n), name);
	const printCode = () => notify(pairingCodeLine("qq", pairing.newCode()));

	const startChannel = () => {
		let appId: string | undefined, secret: string | undefined, apiUrl: string, tokenUrl: string;
		try {
			appId = setting("qq.app_id");
			secret = setting("qq.app_secret");
			if (!appId || !secret || setting("qq.enabled") === "false") return;
			apiUrl = setting("qq.api_url") ?? (setting("qq.sandbox") === "true" ? SANDBOX_API_URL : DEFAULT_API_URL);
			tokenUrl = setting("qq.token_url") as string;
			checkUrl("qq.api_url", apiUrl);
			checkUrl("qq.token_url", tokenUrl);
		} catch (error) {
			notify(`qq: off: ${messageOf(error)}`);
			return;
		}
		const api = new QqApi({ http: options.http, appId, secret, apiUrl, tokenUrl, timers: options.timers, now: options.now, log: (line) => log(api.hide(line)) });
		const hidden = (line: string) => api.hide(line);
		let gateway: QqGateway;
		const channel = new QqChannel({
			api, router: options.router, port: options.port, pairing, timers: options.timers, now: options.now,
			log: (line) => log(hidden(line)), notify: (line) => notify(hidden(line)),
			health: () => ({ health: gateway.health, username: gateway.username, problem: gateway.lastProblem }),
		});
		gateway = new QqGateway({
			api, open: options.openSocket, intents: GROUP_AND_C2C_EVENT, timers: options.timers,
			log: (line) => log(hidden(line)), notify: (line) => notify(hidden(line)),
			onDispatch: (t, d) => channel.onDispatch(t, d),
		});
		running = { api, gateway, channel, unbind: options.router.bind(CHANNEL, channel) };
		gateway.start();
		if (!pairing.list().length) printCode();
	};
	const stopChannel = (): Promise<void> => {
		const current = running;
		running = undefined;
		if (!current) return stopping;
		current.unbind();
		current.api.stop();
		stopping = Promise.all([current.gateway.stop(), current.channel.stop()]).then(() => {});
		return stopping;
	};
	const restart = async () => {
		await stopChannel();
		startChannel();
	};
	restartOnChange(config, QQ_SETTINGS, "qq", restart, log);
	const commands = channelCommands({
		name: "qq", title: "QQ", pairing, printCode,
		status: () => {
			if (!setting("qq.app_id") || !setting("qq.app_secret")) return ["qq: off (no credentials: `config set qq.app_id ID` and `config set qq.app_secret SECRET` from q.qq.com)"];
			if (setting("qq.enabled") === "false") return ["qq: off (qq.enabled is false)"];
			return running?.channel.status() ?? ["qq: stopped"];
		},
		restart: async () => {
			await restart();
			return running !== undefined;
		},
		offHint: "set qq.app_id and qq.app_secret, and qq.enabled is not false",
	});
	return {
		commands,
		start: startChannel,
		async stop() {
			await stopChannel();
			await stopping;
		},
	};
}

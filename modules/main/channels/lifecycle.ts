// channels/lifecycle: the one lifecycle of a paired chat channel (Telegram,
// QQ): started when its settings let it, restarted when one of them changes,
// stopped before a reboot; its console commands (channels/console) and status;
// the pairing code printed at start while no chat is paired. A channel gives
// what differs (PairedChannelSpec): why its settings keep it off, and how to
// run it (the running part: its API client, poll loop or gateway).
//
// Restarts run one at a time: changes that come while one runs (two `config
// set` lines typed quickly) make one more restart after it, never two channels
// at once; and a pairing code still valid is printed again rather than
// replaced, so the first one printed stays right.
import type { Command } from "console/types";
import type { ChannelInfo } from "agent/protocol";
import type { OutEvent } from "core/types";
import { messageOf } from "util/errors";
import type { WipedDirectory } from "util/files";
import { channelCommands, pairingCodeLine } from "channels/console";
import type { Pairing, PairingStore } from "channels/pairing";
import type { ChannelContext, ChatChannel } from "channels/types";

/** What runs while the channel is on (built again at each start). */
export interface RunningChannel {
	/** Status lines of the running part. */
	status(): string[];
	deliver(event: OutEvent): void;
	/** Resolves when nothing of it runs any more. */
	stop(): Promise<void>;
}

export interface PairedChannelSpec {
	name: string;
	/** What people call it in sentences ("Telegram"). */
	title: string;
	/** Its settings: a change of any restarts it. */
	settings: readonly string[];
	/** Its directory under the storage root, and what factory-reset says it wipes. */
	directory: WipedDirectory;
	pairing: Pairing;
	/** Why its settings keep it off, as a status sentence ("off (no token: ...)"), or undefined to run it. */
	off(): string | undefined;
	/** The sentence for `NAME restart` when it stays off. */
	offHint: string;
	/** Builds and starts the running part; throws a sentence when a setting is wrong (the channel then stays off, saying it). */
	run(): RunningChannel;
}

/** store, telling changed() after each update (a chat paired or revoked changes the channel's info). */
export function watchedPairingStore(store: PairingStore, changed: () => void): PairingStore {
	return {
		get state() {
			return store.state;
		},
		update(change) {
			store.update(change);
			changed();
		},
	};
}

/** A channel that could not open its storage: it stays off, saying why. */
export function closedChannel(name: string, directory: WipedDirectory, warning: string): ChatChannel {
	return {
		name, commands: [], directories: [directory], warning,
		start() {},
		stop: async () => {},
		restart: async () => false,
		info: () => ({ name, running: false, off: warning, chats: [] }),
		deliver() {},
	};
}

/** The ChatChannel of a paired channel: its lifecycle over spec. */
export function pairedChannel(spec: PairedChannelSpec, context: ChannelContext): ChatChannel {
	const { name, pairing } = spec;
	let running: RunningChannel | undefined;
	let problem: string | undefined;
	let restarting: Promise<boolean> | undefined;
	let again = false;
	let code: string | undefined;

	const printCode = (fresh: boolean) => {
		if (fresh || !code || !pairing.codeSecondsLeft()) code = pairing.newCode();
		context.notify(pairingCodeLine(name, code));
	};
	const begin = () => {
		problem = undefined;
		if (running || spec.off() !== undefined) return;
		try {
			running = spec.run();
		} catch (error) {
			problem = messageOf(error);
			context.notify(`${name}: off: ${problem}`);
			return;
		}
		// Nobody paired yet: the code to pair with is on the console at once.
		if (!pairing.list().length) printCode(false);
	};
	const end = async () => {
		const current = running;
		running = undefined;
		await current?.stop();
	};
	const restart = (): Promise<boolean> => {
		if (restarting) {
			again = true;
			return restarting;
		}
		restarting = (async () => {
			do {
				again = false;
				await end();
			} while (again);
			begin();
			context.changed();
			return running !== undefined;
		})().finally(() => {
			restarting = undefined;
		});
		return restarting;
	};
	context.config.onChange((changed) => {
		if (spec.settings.includes(changed)) restart().catch((error) => context.log(`${name}: restart failed: ${messageOf(error)}`));
	});
	const commands: Command[] = channelCommands({
		name, title: spec.title, pairing,
		printCode: () => printCode(true),
		status: () => {
			const off = spec.off();
			if (off !== undefined) return [`${name}: ${off}`];
			if (problem !== undefined) return [`${name}: off: ${problem}`];
			return running?.status() ?? [`${name}: stopped`];
		},
		restart,
		offHint: spec.offHint,
	});
	return {
		name,
		commands,
		directories: [spec.directory],
		start() {
			if (restarting) return;
			begin();
			context.changed();
		},
		async stop() {
			await restarting?.catch(() => {});
			await end();
			context.changed();
		},
		restart,
		info(): ChannelInfo {
			const chats = pairing.list().map((c) => c.chat_id);
			if (running) return { name, running: true, chats };
			return { name, running: false, off: spec.off() ?? problem ?? "it is stopped", chats };
		},
		deliver(event) {
			if (running) running.deliver(event);
			else context.log(`${name}: ${event.type} for chat ${event.chat_id} dropped: the channel is off`);
		},
		toOwner(text) {
			if (!running) return [];
			const chats = pairing.ownerChats();
			for (const chat_id of chats) running.deliver({ type: "out_message", channel: name, chat_id, text, request_id: 0, correlation_id: "owner" });
			return chats;
		},
	};
}

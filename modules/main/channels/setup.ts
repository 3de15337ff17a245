// channels/setup: opens every chat channel (channels/all's definitions) with the
// main machine's parts, binds each to the router under its name, and keeps the
// agent machine told which of them run (send_message's targets). main.ts adds
// their commands, starts them after boot and stops them before a reboot.
import type { Command } from "console/types";
import type { ChannelInfo } from "agent/protocol";
import type { WipedDirectory } from "util/files";
import type { OutboundSink } from "router/types";
import type { ChannelContext, ChannelDefinition, ChatChannel } from "channels/types";

export interface OpenChannelsOptions {
	definitions: readonly ChannelDefinition[];
	context: Omit<ChannelContext, "changed" | "toOwner">;
	/** Binds a channel's outbound events to it (the router's bind). */
	bind(name: string, sink: OutboundSink): unknown;
	/** Told every channel's info when one may have changed (the agent port's client). */
	onChange(infos: ChannelInfo[]): void;
}

export interface Channels {
	readonly list: readonly ChatChannel[];
	readonly commands: readonly Command[];
	/** Sentences for the console: channels that could not open. */
	readonly warnings: readonly string[];
	/** Their directories, for factory-reset. */
	readonly directories: readonly WipedDirectory[];
	start(): void;
	stop(): Promise<void>;
}

export function openChannels(options: OpenChannelsOptions): Channels {
	const list: ChatChannel[] = [];
	const changed = () => options.onChange(list.map((channel) => channel.info()));
	const toOwner = (text: string) => list.flatMap((channel) => channel.toOwner?.(text).map((chat) => `${channel.name} chat ${chat}`) ?? []);
	const context: ChannelContext = { ...options.context, changed, toOwner };
	for (const definition of options.definitions) {
		if (list.some((c) => c.name === definition.name)) throw new Error(`two channels are named ${definition.name}: channels/all lists each once`);
		const channel = definition.open(context);
		list.push(channel);
		options.bind(channel.name, channel);
	}
	changed();
	return {
		list,
		commands: list.flatMap((c) => c.commands),
		warnings: list.flatMap((c) => (c.warning ? [c.warning] : [])),
		directories: list.flatMap((c) => c.directories),
		start() {
			for (const channel of list) channel.start();
		},
		async stop() {
			await Promise.all(list.map((channel) => channel.stop()));
		},
	};
}

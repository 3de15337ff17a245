// console/channel: the serial console as a chat channel (channels/types): one
// chat ("local"), always running. What the router hands it for that chat (an
// answer nobody waited for: a schedule's, send_message's) is printed: a line
// naming the request and what it answers (its label: a schedule's firing, how
// late), then the text.
import type { OutEvent } from "core/types";
import { CONSOLE_CHAT } from "agent/protocol";
import { lines } from "util/text";
import type { ChannelContext, ChannelDefinition, ChatChannel } from "channels/types";

/**
 * Prints the out_message events of the console's channel: a line naming the
 * request, then the text. Other channels' events and stage messages are not
 * its own. print must not throw.
 */
export function consoleMessages(print: (line: string) => void): (event: OutEvent) => void {
	return (event) => {
		if (event.type !== "out_message" || event.channel !== CONSOLE_CHAT.channel) return;
		print(event.label ? `agent (request ${event.request_id}, ${event.label}):` : `agent (request ${event.request_id}):`);
		for (const line of lines(event.text)) print(line);
	};
}

function openConsoleChannel(context: ChannelContext): ChatChannel {
	const name = CONSOLE_CHAT.channel;
	const print = consoleMessages((line) => context.notify(line));
	return {
		name,
		commands: [],
		directories: [],
		start() {},
		async stop() {},
		restart: async () => true,
		info: () => ({ name, running: true, chats: [CONSOLE_CHAT.chat_id] }),
		deliver: print,
	};
}

export const serialConsole: ChannelDefinition = { name: CONSOLE_CHAT.channel, open: openConsoleChannel };

// test/channel/setup: a chat channel made only for the tests (issue 27: adding a
// channel is a folder and one line). It is what a new channel's folder holds, at
// its smallest: a ChannelDefinition (channels/types) whose chats are typed on
// the console. `testchat say CHAT TEXT` is a message from CHAT (every chat is the
// owner's): text goes to the router as an in_message, "/stop" cancels the chat's
// requests; what the router hands it back is printed as `testchat CHAT: TEXT`.
// test/channel/all registers it with one line; main.ts does not name it.
import { UsageError, words, type Command } from "console/types";
import type { OutEvent } from "core/types";
import { cancelRequests, NOTHING_RUNNING } from "channels/chat";
import type { ChannelContext, ChannelDefinition, ChatChannel } from "channels/types";
import { lines } from "util/text";

const NAME = "testchat";
/** Chats a test types in (a test uses two or three). */
const CHATS_MAX = 8;

function openTestChannel(context: ChannelContext): ChatChannel {
	let running = false;
	// chat -> its requests not answered yet (for /stop)
	const chats = new Map<string, Set<number>>();
	let messages = 0;
	const print = (chat: string, text: string) => {
		for (const line of lines(text)) context.notify(`${NAME} ${chat}: ${line}`);
	};
	const say = async (chat: string, text: string): Promise<void> => {
		let requests = chats.get(chat);
		if (!requests) {
			if (chats.size >= CHATS_MAX) throw new Error(`${NAME}: at most ${CHATS_MAX} chats`);
			requests = new Set();
			chats.set(chat, requests);
			context.changed();
		}
		if (text.trim() === "/stop") {
			const stopped = await cancelRequests(context.router, [...requests], context.log, NAME);
			requests.clear();
			if (!stopped) print(chat, NOTHING_RUNNING);
			return;
		}
		const outcome = await context.router.publish({
			type: "in_message", channel: NAME, chat_id: chat, sender_id: chat, message_id: String(++messages), text, role: "owner",
		});
		if (outcome.kind === "failed") print(chat, outcome.error);
		else if (outcome.kind === "agent") requests.add(outcome.request_id);
	};
	const commands: Command[] = [{
		name: `${NAME} say`, usage: "CHAT TEXT", help: "a message from a chat of the test channel",
		async run(args) {
			const [chat] = words(args);
			const text = args.slice(args.indexOf(chat ?? "") + (chat ?? "").length).trim();
			if (!chat || !text) throw new UsageError();
			if (!running) throw new Error(`${NAME}: off`);
			await say(chat, text);
		},
	}];
	return {
		name: NAME,
		commands,
		directories: [],
		start() {
			running = true;
			context.notify(`${NAME}: started`);
			context.changed();
		},
		async stop() {
			running = false;
			context.changed();
		},
		async restart() {
			running = true;
			context.changed();
			return true;
		},
		info: () => ({ name: NAME, running, ...(running ? {} : { off: "stopped" }), chats: [...chats.keys()] }),
		deliver(event: OutEvent) {
			if (event.type === "out_message") {
				chats.get(event.chat_id)?.delete(event.request_id);
				print(event.chat_id, event.text || "(empty answer)");
			} else print(event.chat_id, `… ${event.text}`);
		},
	};
}

export const testChannel: ChannelDefinition = { name: NAME, open: openTestChannel };

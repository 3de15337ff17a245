// caps/messaging: send_message (a text to a chat of a channel the firmware has,
// owner only: it reaches people who did not ask) and inspect_image (one image
// from the agent's folder or an http(s) URL, asked about through the LLM
// runtime's infer_media, one image per call; the model profile decides whether
// images and local files are allowed, llm/media).
import { MESSAGE_MAX_BYTES } from "budgets";
import type { Capability } from "caps/types";
import { WORKSPACE_DIRECTORY, checkName } from "caps/files";
import type { ChatOptions, ChatResponse, MediaRequest } from "llm/types";
import type { ChannelInfo } from "agent/protocol";

export interface MessagingDeps {
	/** Delivers text to a chat; throws a sentence for an unknown channel or chat. */
	send(channel: string, chatId: string, text: string): void;
	/** The chat channels the main machine has now: whether each runs, and its chats. */
	channels(): readonly ChannelInfo[];
	/** llm/runtime's inferMedia. */
	inferMedia(request: MediaRequest, options?: ChatOptions): Promise<ChatResponse>;
}

export function messagingTools(deps: MessagingDeps): Capability[] {
	return [
		{
			group: "message",
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "send_message",
					description: "Send a text to a chat of one of the board's channels (not needed to answer the person who asked: your reply reaches them).",
					parameters: {
						type: "object",
						properties: {
							channel: { type: "string", minLength: 1, maxLength: 32, description: "e.g. console" },
							chat_id: { type: "string", maxLength: 64, description: "one of the channel's paired chats (not needed when it has one)" },
							text: { type: "string", minLength: 1, maxLength: MESSAGE_MAX_BYTES },
						},
						required: ["channel", "text"],
						additionalProperties: false,
					},
				},
			},
			run(args) {
				const name = String(args.channel);
				const channels = deps.channels();
				const channel = channels.find((c) => c.name === name);
				if (!channel) throw new Error(`there is no channel "${name}" on this board; the channels are ${channels.map((c) => c.name).join(", ")}`);
				if (!channel.running) throw new Error(`nothing was sent: the ${name} channel is off (${channel.off ?? "it is not running"})`);
				const given = typeof args.chat_id === "string" ? args.chat_id : "";
				const chat = given || (channel.chats.length === 1 ? channel.chats[0] : "");
				if (!channel.chats.length) throw new Error(`nothing was sent: no chat is paired with ${name} yet (\`${name} pair\` on the console prints a code)`);
				if (!chat) throw new Error(`give chat_id: ${name}'s paired chats are ${channel.chats.join(", ")}`);
				if (!channel.chats.includes(chat)) throw new Error(`chat ${chat} is not paired with ${name}; its paired chats are ${channel.chats.join(", ")}`);
				deps.send(name, chat, String(args.text));
				return `sent to ${name}:${chat}`;
			},
		},
		{
			group: "media",
			definition: {
				type: "function",
				function: {
					name: "inspect_image",
					description: "Look at one image (a file in your folder, or an http(s) URL) and answer a question about it.",
					parameters: {
						type: "object",
						properties: {
							file: { type: "string", minLength: 1, maxLength: 64, description: "a file name in your folder" },
							url: { type: "string", minLength: 8, maxLength: 2048, description: "an http(s) URL" },
							question: { type: "string", minLength: 1, maxLength: 1000 },
						},
						required: ["question"],
						additionalProperties: false,
					},
				},
			},
			async run(args, context) {
				const file = typeof args.file === "string" ? args.file : undefined;
				const url = typeof args.url === "string" ? args.url : undefined;
				if ((file === undefined) === (url === undefined)) throw new Error("give exactly one of file or url");
				if (url !== undefined && !/^https?:\/\//i.test(url)) throw new Error("url must start with http:// or https://");
				if (file !== undefined) checkName(file);
				const response = await deps.inferMedia(
					{ prompt: String(args.question), image: file !== undefined ? { path: `${WORKSPACE_DIRECTORY}/${file}` } : { url: url! } },
					{ signal: context.signal },
				);
				const text = typeof response.message.content === "string" ? response.message.content : "";
				if (!text) throw new Error("the model gave no answer about the image; try again or ask differently");
				return text;
			},
		},
	];
}

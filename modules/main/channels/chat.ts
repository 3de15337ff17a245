// channels/chat: what every chat channel (Telegram, QQ) does the same with a
// paired chat's commands: the help text, /session's rules (users may see only
// their own conversation), running one of the agent's commands for the chat, and
// /stop (cancel the chat's requests). The channel parses the message, keeps the
// chat's request ids and sends the text back its own way.
import type { AgentPort, Role } from "router/types";
import type { Pairing } from "channels/pairing";
import { messageOf } from "util/errors";

const HELP = [
	"Send a message and the agent answers; a message sent while it answers steers that answer.",
	"/stop: stop the answer in progress",
	"/new: start a new conversation",
	"/session: this chat's conversation",
	"/help: this list",
];
const OWNER_HELP = "/session list | show [ID] | switch ID | delete ID: every conversation on the board (owner only)";

/** The /help text for a role. */
export function helpText(role: Role): string {
	return [...HELP, ...(role === "owner" ? [OWNER_HELP] : [])].join("\n");
}

/** /session ARGS (and /new, as "new") in a chat: runs the agent's session command for it; resolves with the text to answer (never rejects). */
export async function sessionReply(port: Pick<AgentPort, "command">, channel: string, chatId: string, role: Role, args: string): Promise<string> {
	const [sub = "", ...rest] = args.split(/\s+/).filter(Boolean);
	if (!(sub === "" || sub === "new") && role !== "owner") return "Only the owner's chat may look at other conversations; /session and /session new work here.";
	if (!["", "new", "list", "show", "switch", "delete"].includes(sub)) return "Use /session, /session new, or (owner) /session list | show [ID] | switch ID | delete ID.";
	return chatCommand(port, channel, chatId, sub ? `session ${sub}` : "session", rest.join(" "));
}

/** Runs one of the agent's commands for a chat; resolves with the text to answer (never rejects). */
async function chatCommand(port: Pick<AgentPort, "command">, channel: string, chatId: string, name: string, args: string): Promise<string> {
	try {
		const result = await port.command(name, args, { channel, chat_id: chatId });
		const text = [...result.lines, ...(result.error ? [result.error] : []), ...(result.usage ? ["Those arguments do not fit; /help lists the commands."] : [])].join("\n");
		return text || "done";
	} catch (error) {
		return messageOf(error) || "done";
	}
}

/**
 * /stop: cancels the chat's requests; resolves with how many were stopped (a
 * cancelled request's answer, "request cancelled", comes as its out_message).
 */
export async function cancelRequests(port: Pick<AgentPort, "cancel">, ids: readonly number[], log: (line: string) => void, channel: string): Promise<number> {
	let stopped = 0;
	for (const id of ids) {
		try {
			if (await port.cancel(id)) stopped++;
		} catch (error) {
			log(`${channel}: cancelling request ${id} failed: ${messageOf(error)}`);
		}
	}
	return stopped;
}

export const NOTHING_RUNNING = "Nothing is running in this chat.";

/**
 * /pair CODE from a chat: the answer for the chat, and the role when it was
 * paired just now (the channel then tells the console). A storage failure is
 * logged and answered with a sentence; the code stays valid.
 */
export function pairChat(pairing: Pairing, chatId: string, name: string, code: string, log: (line: string) => void, channel: string): { reply: string; paired?: Role } {
	let outcome;
	try {
		outcome = pairing.pair(chatId, name, code);
	} catch (error) {
		log(`${channel}: saving the pairing of chat ${chatId} failed: ${messageOf(error)}`);
		return { reply: "The board could not save the pairing (a storage problem); try again later." };
	}
	if (!outcome.ok) return { reply: `Not paired: ${outcome.reason}.` };
	if (outcome.already) return { reply: `This chat is paired already (${outcome.role}).` };
	return { reply: `Paired as ${outcome.role}. Send a message to talk to the agent; /help lists the commands.`, paired: outcome.role };
}

// channels/chat: what every chat channel (Telegram, QQ) does the same with a
// paired chat's commands: the help text, /session's rules (users may see only
// their own conversation), running one of the agent's commands for the chat, and
// /stop (cancel the chat's requests, and drop what they still had to say:
// StopGate). The channel parses the message, keeps the chat's request ids and
// sends the text back its own way.
import { CHANNEL_STOPPED_CHATS_MAX } from "budgets";
import type { OutEvent } from "core/types";
import type { AgentPort, ChatRole } from "router/types";
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
export function helpText(role: ChatRole): string {
	return [...HELP, ...(role === "owner" ? [OWNER_HELP] : [])].join("\n");
}

/** /session ARGS (and /new, as "new") in a chat: runs the agent's session command for it; resolves with the text to answer (never rejects). */
export async function sessionReply(port: Pick<AgentPort, "command">, channel: string, chatId: string, role: ChatRole, args: string): Promise<string> {
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

/** A chat's outbox as /stop sees it: calls of the current epoch waiting or on their way, and the epoch of the one on its way (-1: none). */
export interface Outbox {
	pending: number;
	epoch: number;
	sending: number;
}

/** /stop empties an outbox: a new epoch (the calls queued before it are not made); returns how many waited. */
export function dropQueued(outbox: Outbox): number {
	const dropped = outbox.pending - (outbox.sending === outbox.epoch ? 1 : 0);
	outbox.epoch++;
	outbox.pending = 0;
	return dropped;
}

/** /stop's confirmation: whether requests were stopped, and how many waiting messages were dropped. */
export function stopReply(stopped: boolean, dropped: number): string {
	const waiting = dropped ? ` ${dropped} waiting message${dropped === 1 ? " was" : "s were"} dropped.` : "";
	return stopped ? `Stopped (request cancelled).${waiting}` : `${NOTHING_RUNNING}${waiting}`;
}

/**
 * What /stop leaves a chat: the confirmation, then nothing more from the
 * requests it stopped. The channel empties the chat's outbox itself; this gate
 * drops what arrives later. From /stop until the agent has taken the cancel
 * (settled), every out event for the chat is dropped: a send_message of a
 * stopped request may be on its way, and it carries no request id (after the
 * cancel the agent sends no more of them). After it, the stopped requests' own
 * events are (their "request cancelled" answer, a progress line, a streamed
 * preview). Other chats are untouched; a message the chat sends after /stop
 * starts a request the gate lets through. Drops are counted.
 */
export class StopGate {
	readonly #chats = new Map<string, { ids: Set<number>; settling: boolean }>();
	/** Events dropped after a /stop (for status and tests). */
	dropped = 0;

	/** /stop in chatId, whose requests are ids: from now on their events are dropped, and all the chat's until settled(). */
	begin(chatId: string, ids: Iterable<number>): void {
		const entry = this.#chats.get(chatId);
		const all = new Set(ids);
		if (entry) for (const id of entry.ids) all.add(id);
		this.#chats.delete(chatId);
		this.#chats.set(chatId, { ids: all, settling: true });
		if (this.#chats.size > CHANNEL_STOPPED_CHATS_MAX) this.#chats.delete(this.#chats.keys().next().value as string);
	}

	/** Cancels chatId's requests ids through the port, dropping the chat's events meanwhile; resolves with how many were stopped. */
	async cancel(port: Pick<AgentPort, "cancel">, chatId: string, ids: readonly number[], log: (line: string) => void, channel: string): Promise<number> {
		this.begin(chatId, ids);
		try {
			return await cancelRequests(port, ids, log, channel);
		} finally {
			this.settled(chatId);
		}
	}

	/** The agent has answered the cancel: only the stopped requests' events are dropped from now on. */
	settled(chatId: string): void {
		const entry = this.#chats.get(chatId);
		if (!entry) return;
		entry.settling = false;
		if (!entry.ids.size) this.#chats.delete(chatId);
	}

	/** True when request id of chatId was stopped (its streamed deltas are not shown). */
	stopped(chatId: string, id: number): boolean {
		return this.#chats.get(chatId)?.ids.has(id) ?? false;
	}

	/** True (and counted) when event must not reach its chat; a stopped request's answer ends its entry. */
	drops(event: OutEvent): boolean {
		const entry = this.#chats.get(event.chat_id);
		if (!entry) return false;
		const stopped = entry.ids.has(event.request_id);
		if (!stopped && !entry.settling) return false;
		if (stopped && event.type === "out_message") {
			entry.ids.delete(event.request_id);
			if (!entry.ids.size && !entry.settling) this.#chats.delete(event.chat_id);
		}
		this.dropped++;
		return true;
	}
}

/**
 * /pair CODE from a chat: the answer for the chat (none when the answers to
 * unpaired chats are spent: Pairing.mayAnswerPair; logged), and the role when
 * it was paired just now (the channel then tells the console). A storage
 * failure is logged and answered with a sentence; the code stays valid.
 */
export function pairChat(pairing: Pairing, chatId: string, name: string, code: string, log: (line: string) => void, channel: string, senderId?: string): { reply?: string; paired?: ChatRole } {
	let outcome;
	try {
		outcome = pairing.pair(chatId, name, code, senderId);
	} catch (error) {
		log(`${channel}: saving the pairing of chat ${chatId} failed: ${messageOf(error)}`);
		return { reply: "The board could not save the pairing (a storage problem); try again later." };
	}
	if (!outcome.ok) {
		if (pairing.mayAnswerPair(chatId, outcome.checked)) return { reply: `Not paired: ${outcome.reason}.` };
		log(`${channel}: /pair from chat ${chatId} refused (${outcome.checked ? "a wrong code" : outcome.reason.split(":")[0]}); not answered: the answers to unpaired chats are rate-limited`);
		return {};
	}
	if (outcome.already) return { reply: `This chat is paired already (${outcome.role}).` };
	const group = senderId === undefined ? "" : ` You are this group's ${outcome.role}; its other members are users (the console's members command changes that).`;
	return { reply: `Paired as ${outcome.role}.${group} Send a message to talk to the agent; /help lists the commands.`, paired: outcome.role };
}

// channels/console: a chat channel's console commands, one piece for every
// channel (Telegram, QQ): `NAME status | pair | list | revoke CHAT | restart`.
// The channel gives its status lines, its pairing and its restart.
import { PAIRING_CODE_TTL_MS } from "budgets";
import { UsageError, words, type Command } from "console/types";
import type { Pairing } from "channels/pairing";
import { messageOf } from "util/errors";

export interface ChannelCommandsOptions {
	/** The command prefix and the channel's name ("telegram", "qq"). */
	name: string;
	/** What people call it in sentences ("Telegram", "QQ"). */
	title: string;
	pairing: Pairing;
	/** The status lines: why it is off, or the channel's own lines. */
	status(): string[];
	/** Prints a new pairing code on the console. */
	printCode(): void;
	/** Stops and starts the channel; resolves true when it runs again. */
	restart(): Promise<boolean>;
	/** The sentence for `restart` when the channel stays off. */
	offHint: string;
}

/** The line printed with a new pairing code. */
export function pairingCodeLine(name: string, code: string): string {
	return `${name}: pairing code ${code} (valid ${PAIRING_CODE_TTL_MS / 60_000} min): send /pair ${code} to the bot from the chat to pair`;
}

export function channelCommands(o: ChannelCommandsOptions): Command[] {
	const noArgs = (args: string) => {
		if (words(args).length) throw new UsageError();
	};
	const { name, title, pairing } = o;
	return [
		{
			name: `${name} status`, usage: "", help: `the ${title} channel: connection, paired chats, requests in flight`,
			run(args, out) {
				noArgs(args);
				for (const line of o.status()) out.line(line);
				out.line(`paired chats: ${pairing.list().length}; pairing code: ${pairing.codeSecondsLeft() ? `valid ${pairing.codeSecondsLeft()} s more` : "none"}`);
			},
		},
		{
			name: `${name} pair`, usage: "", help: "print a new one-time pairing code (send /pair CODE to the bot)",
			run(args) {
				noArgs(args);
				o.printCode();
			},
		},
		{
			name: `${name} list`, usage: "", help: "the paired chats: id, role, name, when",
			run(args, out) {
				noArgs(args);
				const chats = pairing.list();
				if (!chats.length) out.line(`no chat is paired: \`${name} pair\` prints a code`);
				for (const c of chats) {
					const group = c.sender_id !== undefined || c.members !== undefined ? ` (group: member ${c.sender_id ?? "-"} is ${c.role}, the others ${c.members ?? "user"})` : "";
					out.line(`${c.chat_id} ${c.role} ${c.name || "-"} ${new Date(c.paired_ms).toISOString().slice(0, 16).replace("T", " ")}${group}`);
				}
			},
		},
		{
			name: `${name} revoke`, usage: "CHAT", help: "unpair a chat (it gets only the pairing hint from then on)",
			run(args, out) {
				const list = words(args);
				if (list.length !== 1) throw new UsageError();
				if (!pairing.revoke(list[0])) throw new Error(`chat ${list[0]} is not paired: \`${name} list\` shows the paired chats`);
				out.line(`chat ${list[0]} is no longer paired`);
			},
		},
		{
			name: `${name} members`, usage: "CHAT owner|user", help: "a paired group's other members: users (the default) or owners",
			run(args, out) {
				const list = words(args);
				if (list.length !== 2 || (list[1] !== "owner" && list[1] !== "user")) throw new UsageError();
				const problem = pairing.setMembers(list[0], list[1]);
				if (problem) throw new Error(`${problem}: \`${name} list\` shows the paired chats`);
				out.line(`chat ${list[0]}: its members are ${list[1] === "owner" ? "the owner (every tool)" : "users"} now`);
			},
		},
		{
			name: `${name} restart`, usage: "", help: `stop and start the ${title} channel (after fixing the credentials or the network)`,
			async run(args, out) {
				noArgs(args);
				out.line(await o.restart() ? `${name}: restarted` : `${name}: off (${o.offHint})`);
			},
		},
	];
}

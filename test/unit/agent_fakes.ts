// Fakes for the agent port's unit tests: an in-process "agent machine" (the
// real agent/service over a real Core with a scripted model) behind a link that
// copies every message (a JSON round trip, as XS marshalling copies plain data)
// and delivers it on a later timer turn, as a Worker's message arrives on the
// receiving machine's loop. A test can kill a machine as the host would on an
// out-of-memory, or make the next spawn throw.
import Timer from "timer";
import { UsageError, type Command } from "console/types";
import type { Core } from "core/core";
import type { AgentParts, OpenAgent } from "agent/service";
import { serveAgent } from "agent/service";
import type { SettingsMirror } from "agent/settings";
import type { AgentMachine, SpawnAgent } from "agent/supervisor";
import type { ChatRef } from "agent/protocol";
import type { OutEvent } from "core/types";
import type { OnlineGate } from "net/online";

export function copy<T>(message: T): T {
	return JSON.parse(JSON.stringify(message));
}

function later(fn: () => void): void {
	Timer.set(fn, 0);
}

export const HEAP = { chunkUsed: 1, chunkPeak: 2, chunkSize: 3, slotUsed: 4, slotPeak: 5, slotSize: 6, sockets: 0 };

/** AgentParts over a started Core; commands and the session of a chat as given. */
export function partsOf(core: Core, more: Partial<AgentParts> = {}): AgentParts {
	let stopped = false;
	return {
		core,
		subagents: () => [],
		sessionFor: (chat: ChatRef) => `${chat.channel}-${chat.chat_id}`,
		commands: () => [],
		callCap: async (name, args) => (name === "fails" ? { content: "the tool failed: check its pin", is_error: true } : { content: `${name} ran with ${args}` }),
		heap: () => HEAP,
		collect: () => {},
		warnings: [],
		stop: () => { stopped = true; core.stop(); },
		wipe: () => ({ wiped: [`sessions (${stopped ? "stopped first" : "still running"})`], errors: ["macro tools could not be wiped completely (the disk is busy)"] }),
		...more,
	};
}

export interface FakeMachine extends AgentMachine {
	/** Raw messages main posted to it, in order. */
	received: unknown[];
	/** Messages it posted to main, in order (copies). */
	sent: unknown[];
	alive: boolean;
	terminated: boolean;
	/** Ends the machine as the host does on a crash: onerror(reason) on the creator's next turn. */
	kill(reason: string): void;
	/** Delivers a raw message to main as if the agent had posted it. */
	inject(message: unknown): void;
	/** A hung machine takes messages and never handles them (its loop no longer turns). */
	hung?: boolean;
	settings?: SettingsMirror;
	publish?: (event: OutEvent) => void;
	/** The gate the machine's name lookups wait on (net/online). */
	online?: OnlineGate;
}

/** Spawns in-process agent machines; each opens its parts with open. */
export class FakeAgents {
	readonly machines: FakeMachine[] = [];
	/** Reasons given to the next spawns: each one makes a spawn throw instead. */
	failNext: string[] = [];
	readonly logs: string[] = [];
	#open: OpenAgent;

	constructor(open: OpenAgent) {
		this.#open = open;
	}

	get last(): FakeMachine {
		return this.machines[this.machines.length - 1];
	}

	spawn: SpawnAgent = (handlers) => {
		const failure = this.failNext.shift();
		if (failure) throw new Error(failure);
		const machine: FakeMachine = {
			received: [],
			sent: [],
			alive: true,
			terminated: false,
			post: (message) => {
				if (!machine.alive) throw new Error("the worker has ended");
				const copied = copy(message);
				machine.received.push(copied);
				later(() => machine.alive && !machine.hung && receive(copied));
			},
			terminate: () => {
				machine.alive = false;
				machine.terminated = true;
			},
			kill: (reason) => {
				machine.alive = false;
				later(() => handlers.onerror(reason));
			},
			inject: (message) => later(() => machine.alive && handlers.onmessage(copy(message))),
		};
		const receive = serveAgent({
			post: (message) => {
				const copied = copy(message);
				machine.sent.push(copied);
				later(() => machine.alive && handlers.onmessage(copied));
			},
			open: (settings, publish, online, channels) => {
				machine.settings = settings;
				machine.publish = publish;
				machine.online = online;
				return this.#open(settings, publish, online, channels);
			},
			log: (line) => this.logs.push(line),
		});
		this.machines.push(machine);
		return machine;
	};
}

/** A command that prints its arguments, and one per failure kind. */
export function echoCommands(): Command[] {
	return [
		{ name: "echo", usage: "TEXT", help: "print TEXT twice", run: (args, out) => { out.line(args); out.line(args); } },
		{ name: "slow echo", usage: "TEXT", help: "print TEXT after a turn", concurrent: true, run: async (args, out) => { await Promise.resolve(); out.line(args); } },
		{ name: "usage", usage: "X", help: "always a usage error", run: () => { throw new UsageError(); } },
		{ name: "fails", usage: "", help: "prints, then fails", run: (_args, out) => { out.line("partly"); throw new Error("it failed: try again later"); } },
	];
}

// router/router: the event router (SPEC §8, seed 000 §9). It owns the rules in
// force and the outbound bindings, and it is every channel's one way to the
// agent (RouteIn): channels publish in_message events, the console asks; the
// first matching rule's action runs (run_agent, call_cap, run_script,
// send_message), else the fallback's; nothing here calls the LLM itself. A
// chat's /stop (cancel) and its commands (/session ...) pass through it too.
// One way out: outbound events of the agent (out_message, agent_stage) go to the
// binding of their channel, and the events a publisher watches come back
// through the router as well.
//
// load() replaces the rules only when the new text parses: a malformed rules
// file is reported with the field at fault and the previous rules stay in force.
import { ROUTER_RULES_FILE_MAX_BYTES, ROUTER_SUBMIT_WAIT_MS } from "budgets";
import { Channel, type AgentEvent, type OutEvent } from "core/types";
import { messageOf } from "util/errors";
import { DEFAULT_RULES, fill, findRule, parseRules, type Action, type Rule, type RuleSet } from "router/rules";
import type {
	AgentPort, AskOptions, AskOutcome, CapRunner, ChatRef, CommandResult, InMessage, OutboundSink, PortRequest, RouteIn, RouteOutcome, ScriptRunner, Watch,
} from "router/types";

export interface RouterOptions {
	port: AgentPort;
	/** Runs call_cap rules; without it such rules answer that no capability can be called. */
	callCap?: CapRunner;
	/** Runs run_script rules; without it such rules answer that no script can be run. */
	runScript?: ScriptRunner;
	/** Lines about routing (bad rules, events with no binding). */
	log(line: string): void;
}

export type { Watch } from "router/types";

/** What the router has seen come in, by way (router status, tests). */
export interface RouterCounts {
	published: number;
	asked: number;
	cancels: number;
	commands: number;
	watched: number;
}

export class Router implements RouteIn {
	#port: AgentPort;
	#callCap?: CapRunner;
	#runScript?: ScriptRunner;
	#log: (line: string) => void;
	#rules: RuleSet = DEFAULT_RULES;
	#bindings = new Map<string, OutboundSink>();
	#counts: RouterCounts = { published: 0, asked: 0, cancels: 0, commands: 0, watched: 0 };

	constructor(options: RouterOptions) {
		this.#port = options.port;
		this.#callCap = options.callCap;
		this.#runScript = options.runScript;
		this.#log = options.log;
		options.port.onOut((event) => this.deliver(event));
	}

	/** What came in, by way. */
	get counts(): Readonly<RouterCounts> {
		return this.#counts;
	}

	/** The rules in force. */
	get rules(): readonly Rule[] {
		return this.#rules.rules;
	}

	get fallback(): Action {
		return this.#rules.fallback;
	}

	/**
	 * Replaces the rules with the file's (undefined: no file, the defaults).
	 * Returns undefined when they were taken, else a sentence naming the field at
	 * fault; the rules in force then stay as they were.
	 */
	load(source: string | undefined): string | undefined {
		if (source === undefined) {
			this.#rules = DEFAULT_RULES;
			return undefined;
		}
		if (source.length > ROUTER_RULES_FILE_MAX_BYTES) return `the rules file is larger than ${ROUTER_RULES_FILE_MAX_BYTES} bytes; the previous rules stay in force`;
		try {
			this.#rules = parseRules(source);
			return undefined;
		} catch (error) {
			return `the rules file was not taken (${messageOf(error)}); the previous rules stay in force`;
		}
	}

	/** Binds a channel's outbound events to its sink (one per channel; a second replaces the first). */
	bind(channel: string, sink: OutboundSink): () => void {
		this.#bindings.set(channel, sink);
		return () => {
			if (this.#bindings.get(channel) === sink) this.#bindings.delete(channel);
		};
	}

	/** An outbound event to its channel's binding. Never throws. */
	deliver(event: OutEvent): void {
		const sink = this.#bindings.get(event.channel);
		if (!sink) {
			// The console prints its own (main.ts); other channels without a binding are not running.
			if (event.channel !== Channel.CONSOLE) this.#log(`router: no channel "${event.channel}" is running to take ${event.type} of request ${event.request_id}`);
			return;
		}
		try {
			sink.deliver(event);
		} catch (error) {
			this.#log(`router: channel "${event.channel}" failed to take ${event.type}: ${messageOf(error)}`);
		}
	}

	/** Routes one in_message. Never rejects: a failure is an outcome with a sentence for the person. */
	async publish(message: InMessage, watch: Watch = {}): Promise<RouteOutcome> {
		this.#counts.published++;
		const rule = findRule(this.#rules, message);
		const action = rule ? rule.action : this.#rules.fallback;
		const name = rule?.name;
		try {
			if (action.type === "run_agent") {
				const id = await this.#port.submit(this.#request(message, action.flags, action.text), { waitMs: ROUTER_SUBMIT_WAIT_MS, events: watch.events, onEvent: this.#watch(watch.onEvent) });
				return { kind: "agent", request_id: id, rule: name };
			}
			return await this.#act(message, action, name, (text) => this.#reply(message, text, name));
		} catch (error) {
			return { kind: "failed", error: messageOf(error), rule: name };
		}
	}

	/**
	 * The console's ask: the rules apply to it as to a channel's message. A
	 * run_agent rule (its text; the console's own flags, since the console waits
	 * for the answer itself) or the fallback asks the agent and waits; any other
	 * action's reply is the answer. Never rejects.
	 */
	async ask(message: InMessage, options: Omit<AskOptions, "waitMs"> & { waitMs?: number }): Promise<AskOutcome> {
		this.#counts.asked++;
		const rule = findRule(this.#rules, message);
		const action = rule ? rule.action : this.#rules.fallback;
		const name = rule?.name;
		try {
			if (action.type === "run_agent") {
				const response = await this.#port.ask(this.#request(message, 0, rule ? action.text : undefined), { ...options, waitMs: options.waitMs ?? ROUTER_SUBMIT_WAIT_MS, onEvent: this.#watch(options.onEvent) });
				return { kind: "answer", ok: response.ok, text: response.text, error: response.error, rule: name };
			}
			let replied = "";
			await this.#act(message, action, name, (text) => (replied = text || `(${name ?? "the rule"} gave no text)`));
			return { kind: "answer", ok: true, text: replied, rule: name };
		} catch (error) {
			return { kind: "failed", error: messageOf(error), rule: name };
		}
	}

	/** A chat's /stop (or the console's cancel): the request cancelled through the router. */
	cancel(requestId: number): Promise<number> {
		this.#counts.cancels++;
		return this.#port.cancel(requestId);
	}

	/** One of the agent's commands for a chat, through the router. */
	command(name: string, args: string, chat: ChatRef): Promise<CommandResult> {
		this.#counts.commands++;
		return this.#port.command(name, args, chat);
	}

	#request(message: InMessage, flags: number, text: string | undefined): PortRequest {
		return {
			flags,
			user_text: text === undefined ? message.text : fill(text, message),
			source: { channel: message.channel, chat_id: message.chat_id, sender_id: message.sender_id, message_id: message.message_id, cap: "" },
			role: message.role,
		};
	}

	/** The events a publisher watches come back through the router: counted here, then handed on. */
	#watch(onEvent: ((event: AgentEvent) => void) | undefined): ((event: AgentEvent) => void) | undefined {
		if (!onEvent) return undefined;
		return (event) => {
			this.#counts.watched++;
			onEvent(event);
		};
	}

	/** A rule's action other than run_agent; reply takes a reply's text. */
	async #act(message: InMessage, action: Exclude<Action, { type: "run_agent" }>, name: string | undefined, reply: (text: string) => void): Promise<RouteOutcome> {
		switch (action.type) {
			case "call_cap": {
				if (!this.#callCap) throw new Error(`the rule "${name ?? "fallback"}" calls ${action.cap}, but no capability can be called from rules in this build`);
				const result = await this.#callCap(action.cap, action.args, message);
				if (action.reply) reply(result);
				return { kind: "cap", rule: name };
			}
			case "run_script": {
				if (!this.#runScript) throw new Error(`the rule "${name ?? "fallback"}" runs the script ${action.script}, but no script can be run from rules in this build`);
				const result = await this.#runScript(action.script, message);
				if (action.reply) reply(result);
				return { kind: "script", rule: name };
			}
			case "send_message": {
				const text = fill(action.text, message);
				const channel = action.channel ?? message.channel, chat = action.chat ?? message.chat_id;
				// To the asking chat itself: its reply; elsewhere: an out_message to that channel's binding.
				if (channel === message.channel && chat === message.chat_id) reply(text);
				else this.deliver({ type: "out_message", channel, chat_id: chat, text, request_id: 0, correlation_id: message.message_id });
				return { kind: "sent", rule: name };
			}
		}
	}

	#reply(message: InMessage, text: string, rule?: string): void {
		this.deliver({ type: "out_message", channel: message.channel, chat_id: message.chat_id, text: text || `(${rule ?? "the rule"} gave no text)`, request_id: 0, correlation_id: message.message_id });
	}
}

// router/router: the event router (SPEC §8, seed 000 §9). It owns the rules in
// force and the outbound bindings. Channels publish in_message events; the first
// matching rule's action runs (run_agent, call_cap, send_message), else the
// fallback's; nothing here calls the LLM itself. Outbound events of the agent
// (out_message, agent_stage) go to the binding of their channel.
//
// load() replaces the rules only when the new text parses: a malformed rules
// file is reported with the field at fault and the previous rules stay in force.
import { ROUTER_RULES_FILE_MAX_BYTES, ROUTER_SUBMIT_WAIT_MS } from "budgets";
import { Channel, type OutEvent } from "core/types";
import { messageOf } from "util/errors";
import { DEFAULT_RULES, fill, findRule, parseRules, type Action, type Rule, type RuleSet } from "router/rules";
import type { AgentPort, CapRunner, InMessage, OutboundSink, PortRequest, RouteOutcome, ScriptRunner, Watch } from "router/types";

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

export class Router {
	#port: AgentPort;
	#callCap?: CapRunner;
	#runScript?: ScriptRunner;
	#log: (line: string) => void;
	#rules: RuleSet = DEFAULT_RULES;
	#bindings = new Map<string, OutboundSink>();

	constructor(options: RouterOptions) {
		this.#port = options.port;
		this.#callCap = options.callCap;
		this.#runScript = options.runScript;
		this.#log = options.log;
		options.port.onOut((event) => this.deliver(event));
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
		const rule = findRule(this.#rules, message);
		const action = rule ? rule.action : this.#rules.fallback;
		const name = rule?.name;
		try {
			switch (action.type) {
				case "run_agent": {
					const request: PortRequest = {
						flags: action.flags,
						user_text: action.text === undefined ? message.text : fill(action.text, message),
						source: { channel: message.channel, chat_id: message.chat_id, sender_id: message.sender_id, message_id: message.message_id, cap: "" },
						role: message.role,
					};
					const id = await this.#port.submit(request, { waitMs: ROUTER_SUBMIT_WAIT_MS, ...watch });
					return { kind: "agent", request_id: id, rule: name };
				}
				case "call_cap": {
					if (!this.#callCap) throw new Error(`the rule "${name ?? "fallback"}" calls ${action.cap}, but no capability can be called from rules in this build`);
					const result = await this.#callCap(action.cap, action.args, message);
					if (action.reply) this.#reply(message, result, name);
					return { kind: "cap", rule: name };
				}
				case "run_script": {
					if (!this.#runScript) throw new Error(`the rule "${name ?? "fallback"}" runs the script ${action.script}, but no script can be run from rules in this build`);
					const result = await this.#runScript(action.script, message);
					if (action.reply) this.#reply(message, result, name);
					return { kind: "script", rule: name };
				}
				case "send_message": {
					this.deliver({
						type: "out_message", channel: action.channel ?? message.channel, chat_id: action.chat ?? message.chat_id,
						text: fill(action.text, message), request_id: 0, correlation_id: message.message_id,
					});
					return { kind: "sent", rule: name };
				}
			}
		} catch (error) {
			return { kind: "failed", error: messageOf(error), rule: name };
		}
	}

	#reply(message: InMessage, text: string, rule?: string): void {
		this.deliver({ type: "out_message", channel: message.channel, chat_id: message.chat_id, text: text || `(${rule ?? "the rule"} gave no text)`, request_id: 0, correlation_id: message.message_id });
	}
}

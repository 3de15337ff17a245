// caps/registry: the one tool registry. It turns the declarative table of
// capabilities (caps/types) into what the agent core plugs in: a TOOLS context
// provider (the definitions a request may use), a CallCap, and runsAlone(name).
//
// The call path, in this order (SPEC §7):
//   resolve the name (unknown -> is_error naming the known tools)
//   parse the arguments (invalid JSON or not an object -> is_error)
//   validate them against the schema (caps/schema; the error names the field)
//   policy: the role x tool table (caps/policy; a refusal says why)
//   before hooks (may veto, or amend the arguments, which are validated again)
//   the handler (a throw becomes is_error with its message)
//   after hooks (may replace the outcome)
// Progress goes through ToolContext.progress, which the core turns into
// tool_execution_update events. Every call is logged as one line with its
// arguments masked by util/secrets' maskedJson, the one masking function the
// config, stage messages and `session show` use.
// Results longer than TOOL_RESULT_MAX_CHARS are cut, so one tool cannot flood
// the context.
//
// The provider's list depends only on the role, the session's visible groups and
// the dynamic tools (macros), so for the same inputs it is the same array with the
// same bytes in the same order: the request prefix stays cacheable.
import { CAPS_OFFER_CACHE_MAX, TOOLBOX_MAX_TOOLS, TOOL_RESULT_MAX_CHARS } from "budgets";
import type { JsonObject, ToolDefinition } from "llm/types";
import type { AgentRequest, CallCap, ContextContent, ContextProvider, ToolContext, ToolOutcome } from "core/types";
import { maskedJson } from "util/secrets";
import { decide, policyTable, roleOf, type PolicyTable } from "caps/policy";
import { checkSchema, checkValue, kindOf, preview } from "caps/schema";
import type { CapContext, CapHooks, CapSource, Capability, Role, VisibleGroups } from "caps/types";
import { messageOf } from "util/errors";
import { Aborter } from "net/abort";

// OpenAI's rule for function names; Anthropic's is the same.
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface RegistryOptions {
	/** Dynamic tools (macros), asked on every request; their names must not clash with the table. */
	sources?: CapSource[];
	hooks?: CapHooks[];
	/** Hidden groups a request's session made visible (skills); default none. */
	visibleGroups?: VisibleGroups;
	/** One line per call (default: none). */
	log?(line: string): void;
	/** Monotonic milliseconds for the log line's duration (default Date.now). */
	now?(): number;
}

/** Checks one capability's name and schema; throws naming the problem (a programming error at start-up, or a bad macro). */
export function checkCapability(cap: Capability): void {
	const name = cap.definition.function.name;
	if (!TOOL_NAME.test(name)) throw new Error(`caps: "${name}" is not a valid tool name (letters, digits, _ and -, at most 64)`);
	const parameters = cap.definition.function.parameters;
	if (parameters.type !== "object") throw new Error(`caps: the parameters of ${name} must be an object schema`);
	checkSchema(parameters, `${name}.parameters`, 0);
	if (typeof cap.group !== "string" || !cap.group) throw new Error(`caps: ${name} has no group`);
}

export class Registry {
	readonly #table = new Map<string, Capability>();
	readonly #policy: PolicyTable;
	readonly #options: RegistryOptions;
	readonly #offers = new Map<string, ToolDefinition[]>();
	/** The last offer and what it was made from (see #offer). */
	#last: Offer | undefined = undefined;
	readonly provider: ContextProvider;
	readonly callCap: CallCap;

	/** Throws (a programming error) on a duplicate or malformed name or schema, or too many tools. */
	constructor(caps: readonly Capability[], options: RegistryOptions = {}) {
		if (caps.length > TOOLBOX_MAX_TOOLS) throw new Error(`caps: ${caps.length} tools is more than the ${TOOLBOX_MAX_TOOLS} a request can carry`);
		for (const cap of caps) {
			checkCapability(cap);
			const name = cap.definition.function.name;
			if (this.#table.has(name)) throw new Error(`caps: the tool name "${name}" is used twice`);
			this.#table.set(name, cap);
		}
		this.#policy = policyTable(caps);
		this.#options = options;
		this.provider = { name: "tools", collect: (request) => this.#collect(request) };
		this.callCap = (call, context) => this.call(call.name, call.arguments, context);
	}

	/** Every capability: the table's, then the dynamic ones. */
	list(): Capability[] {
		const all = [...this.#table.values()];
		for (const source of this.#options.sources ?? []) {
			for (const cap of source.list()) if (!this.#table.has(cap.definition.function.name)) all.push(cap);
		}
		return all;
	}

	get names(): string[] {
		return this.list().map((cap) => cap.definition.function.name);
	}

	find(name: string): Capability | undefined {
		return this.#table.get(name) ?? this.list().find((cap) => cap.definition.function.name === name);
	}

	/** undefined when role may run the tool, else the reason (the role x tool table). */
	refusal(cap: Capability, role: Role): string | undefined {
		const row = this.#policy.get(cap.definition.function.name);
		return row && this.#table.get(cap.definition.function.name) === cap ? row[role] : decide(cap, role);
	}

	runsAlone = (name: string): boolean => this.find(name)?.runsAlone === true;

	/** The tools offered to a request: allowed for its role, and visible (not hidden, or its group made visible). */
	offered(request: AgentRequest): ToolDefinition[] {
		return this.#offer(request).tools;
	}

	/**
	 * The offer for a request, and its provider content. The inputs are the role,
	 * the visible groups (a set given again while the groups stay the same) and the
	 * dynamic tools (an array given again while they stay the same): asked again with
	 * the same ones, as every round of a request and most requests are, the last
	 * offer comes back as it is, with no list, filter, key string or object made
	 * (each round asks; in XS that was ~3 KiB of heap per round).
	 */
	#offer(request: AgentRequest): Offer {
		const role = roleOf(request);
		const visible = this.#options.visibleGroups?.(request) ?? NO_GROUPS;
		const sources = this.#options.sources;
		const last = this.#last;
		if (last && last.role === role && last.visible === visible && last.visibleSize === visible.size && sameLists(last.lists, sources)) return last;
		const lists: Capability[][] = [];
		for (const source of sources ?? []) lists.push(source.list());
		const caps = this.list().filter((cap) => this.refusal(cap, role) === undefined && (!cap.hidden || visible.has(cap.group)));
		// Same inputs, same array: the bytes of the tool list do not change between rounds.
		const key = `${role}|${[...visible].sort().join(",")}|${caps.map((cap) => cap.definition.function.name).join(",")}`;
		let tools = this.#offers.get(key);
		if (!tools) {
			if (this.#offers.size >= CAPS_OFFER_CACHE_MAX) this.#offers.clear();
			tools = caps.map((cap) => cap.definition);
			this.#offers.set(key, tools);
		}
		const offer: Offer = { role, visible, visibleSize: visible.size, lists, tools, content: tools.length ? { kind: "tools", content: tools } : undefined };
		this.#last = offer;
		return offer;
	}

	#collect(request: AgentRequest): ContextContent | undefined {
		return this.#offer(request).content;
	}

	/**
	 * Runs one call through the whole path; never throws (failures are is_error
	 * outcomes). A promise only when a hook or the handler answered with one: a
	 * synchronous tool (most are) costs no async call, promise or await, which in
	 * XS cost heap per call.
	 */
	call(name: string, argumentsText: string, context: ToolContext): ToolOutcome | Promise<ToolOutcome> {
		const role = roleOf(context.request);
		const log = this.#options.log;
		if (!log) return this.#call(name, argumentsText, context, role);
		const started = this.#now();
		const result = this.#call(name, argumentsText, context, role);
		if (result instanceof Promise) return result.then((outcome) => this.#logged(log, name, argumentsText, role, started, outcome));
		return this.#logged(log, name, argumentsText, role, started, result);
	}

	#now(): number {
		return this.#options.now?.() ?? Date.now();
	}

	#logged(log: (line: string) => void, name: string, argumentsText: string, role: Role, started: number, outcome: ToolOutcome): ToolOutcome {
		const ms = this.#now() - started;
		// One concat: a template literal makes each intermediate string in XS.
		log("tool ".concat(preview(name), " role=", role, outcome.is_error ? " error " : " ok ", String(Math.round(ms)), " ms args=", preview(maskedJson(argumentsText.trim() || "{}"))));
		return outcome;
	}

	/** The path up to the handler: resolve, parse, schema, policy; then the hooks and the handler. */
	#call(name: string, argumentsText: string, context: ToolContext, role: Role): ToolOutcome | Promise<ToolOutcome> {
		const cap = this.find(name);
		if (!cap) {
			const known = this.list().filter((c) => this.refusal(c, role) === undefined).map((c) => c.definition.function.name);
			return failure(`unknown tool "${preview(name)}": the known tools are ${known.join(", ") || "(none)"}`);
		}
		const parsed = parseArguments(argumentsText);
		if (typeof parsed === "string") return failure(parsed);
		const problem = checkValue(parsed, cap.definition.function.parameters, "arguments", 0);
		if (problem) return failure(`the arguments do not fit the schema of ${name}: ${problem}`);
		const refused = this.refusal(cap, role);
		if (refused !== undefined) return failure(refused);
		const capContext: CapContext = { request: context.request, signal: context.signal, progress: context.progress, role };
		const hooks = this.#options.hooks;
		if (hooks && hooks.length) return this.#hooked(cap, name, parsed, capContext, hooks);
		if (capContext.signal.aborted) return failure("the request was cancelled before the tool ran");
		let result: unknown;
		try {
			result = cap.run(parsed, capContext);
		} catch (error) {
			return failure(messageOf(error));
		}
		return result instanceof Promise ? result.then(outcome, (error) => failure(messageOf(error))) : outcome(result);
	}

	/** The hooks around the handler: before hooks (veto, or amended arguments checked again), the handler, after hooks. */
	async #hooked(cap: Capability, name: string, parsed: JsonObject, context: CapContext, hooks: CapHooks[]): Promise<ToolOutcome> {
		let args = parsed;
		for (const hook of hooks) {
			if (!hook.before) continue;
			let decision;
			try {
				decision = await hook.before(name, args, context);
			} catch (error) {
				return failure(`the call was stopped before it ran: ${messageOf(error)}`);
			}
			if (decision && "veto" in decision) return failure(decision.veto);
			if (decision && "args" in decision) {
				const again = checkValue(decision.args, cap.definition.function.parameters, "arguments", 0);
				if (again) return failure(`the amended arguments do not fit the schema of ${name}: ${again}`);
				args = decision.args;
			}
		}
		if (context.signal.aborted) return failure("the request was cancelled before the tool ran");
		let result: ToolOutcome;
		try {
			result = outcome(await cap.run(args, context));
		} catch (error) {
			result = failure(messageOf(error));
		}
		for (const hook of hooks) {
			if (!hook.after) continue;
			try {
				result = outcome((await hook.after(name, args, result, context)) ?? result);
			} catch (error) {
				result = failure(`the tool ran, but checking its result failed: ${messageOf(error)}`);
			}
		}
		return result;
	}
}

/** An offer (Registry.#offer) and the inputs it was made from. */
interface Offer {
	role: Role;
	visible: ReadonlySet<string>;
	visibleSize: number;
	/** What each source's list() gave. */
	lists: Capability[][];
	tools: ToolDefinition[];
	content: ContextContent | undefined;
}

const NO_GROUPS: ReadonlySet<string> = new Set<string>();

/** Whether every source gives the array it gave for the last offer. */
function sameLists(lists: Capability[][], sources: CapSource[] | undefined): boolean {
	const count = sources ? sources.length : 0;
	if (lists.length !== count) return false;
	for (let i = 0; i < count; i++) if (sources![i].list() !== lists[i]) return false;
	return true;
}

/** One line for a log: the tool name and its arguments, secret-looking values masked, cut short. */
export function describeCall(name: string, argumentsText: string): string {
	return `${name} ${preview(maskedJson(argumentsText))}`;
}

/** A context for a call made outside a request (the console's `tools call`): role from the request, never cancelled. */
export function consoleContext(request: AgentRequest, progress: (text: string) => void = () => {}): ToolContext {
	return { request, signal: new Aborter().signal, progress };
}

function parseArguments(text: string): JsonObject | string {
	let value: unknown;
	try {
		// Models send "" for a call without arguments.
		value = JSON.parse(text.trim() === "" ? "{}" : text);
	} catch (error) {
		return `the arguments are not valid JSON: ${messageOf(error)}; send a JSON object`;
	}
	if (typeof value !== "object" || value === null || Array.isArray(value)) return `the arguments must be a JSON object, not ${kindOf(value as never)}`;
	return value as JsonObject;
}

function outcome(result: unknown): ToolOutcome {
	if (typeof result === "string") return { content: cut(result) };
	if (typeof result === "object" && result !== null && typeof (result as ToolOutcome).content === "string") {
		const { content, is_error } = result as ToolOutcome;
		return is_error ? { content: cut(content), is_error: true } : { content: cut(content) };
	}
	return failure("the tool returned no text (a bug in the tool)");
}

export function failure(content: string): ToolOutcome {
	return { content, is_error: true };
}

function cut(text: string): string {
	if (text.length <= TOOL_RESULT_MAX_CHARS) return text;
	return `${text.slice(0, TOOL_RESULT_MAX_CHARS)}\n… (cut: the result had ${text.length} characters)`;
}

// core/tools: turns a declarative table of tools (ToolSpec, core/types) into what
// the core plugs in: a TOOLS context provider (the LLM-visible definitions), a
// CallCap that checks each call before running it, and runsAlone(name).
//
// Before a tool runs, in this order: resolve the name (unknown -> an is_error
// result naming the known tools), parse the arguments (invalid JSON, or not an
// object -> is_error), check them against the tool's schema, then the policy
// (by default restricted tools are refused for "subagent" and "cron" requests).
// A string result becomes {content}; a throw becomes is_error with its message.
// Results longer than TOOL_RESULT_MAX_CHARS are cut, so one tool cannot flood
// the context. Nothing here logs arguments; describeCall() gives a log line with
// secret-looking values masked (util/secrets' maskedJson, which the core's verbose
// stage messages and `session show` use too).
//
// Known limits: the schema check is the subset tools use (type, properties,
// required, enum, minimum/maximum, minLength/maxLength, items, minItems/maxItems,
// additionalProperties: false), nested up to TOOL_SCHEMA_MAX_DEPTH; anything
// else in a schema ($ref, oneOf, pattern, format) is passed to the model but not
// checked here.
import { TOOLBOX_MAX_TOOLS, TOOL_ARGUMENT_PREVIEW_CHARS, TOOL_RESULT_MAX_CHARS, TOOL_SCHEMA_MAX_DEPTH } from "budgets";
import type { JsonObject, JsonValue, ToolDefinition } from "llm/types";
import { Channel, type AgentRequest, type CallCap, type ContextProvider, type ToolOutcome, type ToolSpec } from "core/types";
import { messageOf } from "util/errors";
import { maskedJson } from "util/secrets";

/**
 * Decides whether a request may use a tool. refuse() returns a sentence saying
 * why not (it becomes the is_error result the model sees), or undefined to allow.
 * Must not throw (a throw refuses the call with its message).
 */
export interface ToolPolicy {
	refuse(spec: ToolSpec, request: AgentRequest): string | undefined;
}

/** Source channels that never get restricted tools (SPEC §7: cron, subagent). */
export const RESTRICTED_CHANNELS: readonly string[] = Object.freeze([Channel.SUBAGENT, Channel.CRON]);

/** The default policy: restricted tools are refused for the given source channels. */
export function restrictedPolicy(channels: readonly string[] = RESTRICTED_CHANNELS): ToolPolicy {
	return {
		refuse(spec, request) {
			if (!spec.restricted || !channels.includes(request.source.channel)) return undefined;
			return `the tool ${spec.definition.function.name} is not available to ${request.source.channel} requests`;
		},
	};
}

export interface Toolbox {
	/** name "tools": the definitions of the tools the policy allows for the request. */
	readonly provider: ContextProvider;
	readonly callCap: CallCap;
	/** True when the named tool must not run in parallel with the round's other calls. */
	runsAlone(name: string): boolean;
	/** The tool names, in table order. */
	readonly names: readonly string[];
}

// OpenAI's rule for function names; Anthropic's is the same.
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const SCHEMA_TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

/**
 * Builds the toolbox. Throws (a programming error, at start-up) on a duplicate or
 * malformed name, a schema that is not an object schema or names an unknown type,
 * or more than TOOLBOX_MAX_TOOLS tools.
 */
export function toolbox(specs: readonly ToolSpec[], policy: ToolPolicy = restrictedPolicy()): Toolbox {
	if (specs.length > TOOLBOX_MAX_TOOLS) throw new Error(`tools: ${specs.length} tools is more than the ${TOOLBOX_MAX_TOOLS} a request can carry`);
	const table = new Map<string, ToolSpec>();
	for (const spec of specs) {
		const name = spec.definition.function.name;
		if (!TOOL_NAME.test(name)) throw new Error(`tools: "${name}" is not a valid tool name (letters, digits, _ and -, at most 64)`);
		if (table.has(name)) throw new Error(`tools: the tool name "${name}" is used twice`);
		const parameters = spec.definition.function.parameters;
		if (parameters.type !== "object") throw new Error(`tools: the parameters of ${name} must be an object schema`);
		checkSchema(parameters, `${name}.parameters`, 0);
		table.set(name, spec);
	}
	const names = [...table.keys()];

	const refusal = (spec: ToolSpec, request: AgentRequest): string | undefined => {
		try {
			return policy.refuse(spec, request);
		} catch (error) {
			return messageOf(error);
		}
	};

	const provider: ContextProvider = {
		name: "tools",
		collect(request) {
			const offered: ToolDefinition[] = [];
			for (const spec of table.values()) if (refusal(spec, request) === undefined) offered.push(spec.definition);
			return offered.length ? { kind: "tools", content: offered } : undefined;
		},
	};

	const callCap: CallCap = async (call, context) => {
		const spec = table.get(call.name);
		if (!spec) return failure(`unknown tool "${preview(call.name)}": the known tools are ${names.join(", ") || "(none)"}`);
		const parsed = parseArguments(call.arguments);
		if (typeof parsed === "string") return failure(parsed);
		const problem = checkValue(parsed, spec.definition.function.parameters, "arguments", 0);
		if (problem) return failure(`the arguments do not fit the schema of ${call.name}: ${problem}`);
		const refused = refusal(spec, context.request);
		if (refused !== undefined) return failure(refused);
		if (context.signal.aborted) return failure("the request was cancelled before the tool ran");
		try {
			return outcome(await spec.run(parsed, context));
		} catch (error) {
			return failure(messageOf(error));
		}
	};

	return {
		provider,
		callCap,
		runsAlone: (name) => table.get(name)?.runsAlone === true,
		names,
	};
}

/** One line for a log: the tool name and its arguments, secret-looking values masked, cut short. */
export function describeCall(name: string, argumentsText: string): string {
	return `${name} ${preview(maskedJson(argumentsText))}`;
}

function parseArguments(text: string): JsonObject | string {
	let value: unknown;
	try {
		// Models send "" for a call without arguments.
		value = JSON.parse(text.trim() === "" ? "{}" : text);
	} catch (error) {
		return `the arguments are not valid JSON: ${messageOf(error)}; send a JSON object`;
	}
	if (typeof value !== "object" || value === null || Array.isArray(value)) return `the arguments must be a JSON object, not ${kindOf(value as JsonValue)}`;
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

function failure(content: string): ToolOutcome {
	return { content, is_error: true };
}

function cut(text: string): string {
	if (text.length <= TOOL_RESULT_MAX_CHARS) return text;
	return `${text.slice(0, TOOL_RESULT_MAX_CHARS)}\n… (cut: the result had ${text.length} characters)`;
}

function preview(text: string): string {
	return text.length > TOOL_ARGUMENT_PREVIEW_CHARS ? `${text.slice(0, TOOL_ARGUMENT_PREVIEW_CHARS)}…` : text;
}

// ---- the schema subset ----

function kindOf(value: JsonValue | undefined): string {
	if (value === null) return "null";
	if (Array.isArray(value)) return "an array";
	if (typeof value === "object") return "an object";
	if (typeof value === "string") return "a string";
	if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a number";
	return typeof value === "boolean" ? "a boolean" : "nothing";
}

function fitsType(value: JsonValue, type: string): boolean {
	switch (type) {
		case "object": return typeof value === "object" && value !== null && !Array.isArray(value);
		case "array": return Array.isArray(value);
		case "string": return typeof value === "string";
		case "number": return typeof value === "number" && Number.isFinite(value);
		case "integer": return typeof value === "number" && Number.isInteger(value);
		case "boolean": return typeof value === "boolean";
		case "null": return value === null;
		default: return false;
	}
}

function typesOf(schema: JsonObject): string[] | undefined {
	const type = schema.type;
	if (typeof type === "string") return [type];
	if (Array.isArray(type) && type.every((t) => typeof t === "string")) return type as string[];
	return undefined;
}

function asSchema(value: JsonValue | undefined): JsonObject | undefined {
	return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
}

// Construction-time check: the parts this file reads must make sense.
function checkSchema(schema: JsonObject, where: string, depth: number): void {
	if (depth > TOOL_SCHEMA_MAX_DEPTH) throw new Error(`tools: ${where} nests deeper than ${TOOL_SCHEMA_MAX_DEPTH} levels`);
	const types = schema.type === undefined ? [] : typesOf(schema);
	if (!types || types.some((t) => !SCHEMA_TYPES.has(t))) throw new Error(`tools: ${where} has an unknown type ${JSON.stringify(schema.type)}`);
	if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === "string")))
		throw new Error(`tools: ${where}.required must be a list of property names`);
	if (schema.enum !== undefined && !(Array.isArray(schema.enum) && schema.enum.length)) throw new Error(`tools: ${where}.enum must be a non-empty list`);
	const properties = asSchema(schema.properties);
	if (schema.properties !== undefined && !properties) throw new Error(`tools: ${where}.properties must be an object`);
	for (const [key, sub] of Object.entries(properties ?? {})) {
		const child = asSchema(sub);
		if (!child) throw new Error(`tools: ${where}.properties.${key} must be a schema object`);
		checkSchema(child, `${where}.${key}`, depth + 1);
	}
	if (schema.items !== undefined) {
		const items = asSchema(schema.items);
		if (!items) throw new Error(`tools: ${where}.items must be a schema object`);
		checkSchema(items, `${where}[]`, depth + 1);
	}
}

// JSON objects inherit from Object.prototype: "toString" is not a property the model sent.
function hasOwn(object: object, key: string): boolean {
	return Object.prototype.hasOwnProperty.call(object, key);
}

function shown(value: JsonValue): string {
	return preview(JSON.stringify(value));
}

/** The first problem of value against schema, as a phrase naming the path; undefined when it fits. */
function checkValue(value: JsonValue, schema: JsonObject, path: string, depth: number): string | undefined {
	if (depth > TOOL_SCHEMA_MAX_DEPTH) return undefined; // checkSchema refused deeper schemas; values deeper than those are free
	const types = typesOf(schema);
	if (types && !types.some((t) => fitsType(value, t))) return `${path} must be ${types.map((t) => (t === "integer" ? "an integer" : t === "array" || t === "object" ? `an ${t}` : t === "null" ? "null" : `a ${t}`)).join(" or ")}, not ${kindOf(value)}`;
	if (Array.isArray(schema.enum) && !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value)))
		return `${path} must be one of ${schema.enum.map(shown).join(", ")}, not ${shown(value)}`;
	if (typeof value === "number") {
		if (typeof schema.minimum === "number" && value < schema.minimum) return `${path} must be at least ${schema.minimum}, not ${value}`;
		if (typeof schema.maximum === "number" && value > schema.maximum) return `${path} must be at most ${schema.maximum}, not ${value}`;
	}
	if (typeof value === "string") {
		// Lengths in code points, as JSON Schema counts them.
		const length = [...value].length;
		if (typeof schema.minLength === "number" && length < schema.minLength) return `${path} must have at least ${schema.minLength} characters, not ${length}`;
		if (typeof schema.maxLength === "number" && length > schema.maxLength) return `${path} must have at most ${schema.maxLength} characters, not ${length}`;
	}
	if (Array.isArray(value)) {
		if (typeof schema.minItems === "number" && value.length < schema.minItems) return `${path} must have at least ${schema.minItems} items, not ${value.length}`;
		if (typeof schema.maxItems === "number" && value.length > schema.maxItems) return `${path} must have at most ${schema.maxItems} items, not ${value.length}`;
		const items = asSchema(schema.items);
		if (items) {
			for (let i = 0; i < value.length; i++) {
				const problem = checkValue(value[i], items, `${path}[${i}]`, depth + 1);
				if (problem) return problem;
			}
		}
	}
	if (typeof value === "object" && value !== null && !Array.isArray(value)) {
		const properties = asSchema(schema.properties) ?? {};
		if (Array.isArray(schema.required)) {
			for (const key of schema.required) if (typeof key === "string" && !hasOwn(value, key)) return `${path}.${key} is required`;
		}
		for (const [key, item] of Object.entries(value)) {
			const sub = hasOwn(properties, key) ? asSchema(properties[key]) : undefined;
			if (sub) {
				const problem = checkValue(item, sub, `${path}.${key}`, depth + 1);
				if (problem) return problem;
			} else if (schema.additionalProperties === false) {
				return `${path} has no property "${preview(key)}" (known: ${Object.keys(properties).join(", ") || "none"})`;
			}
		}
	}
	return undefined;
}


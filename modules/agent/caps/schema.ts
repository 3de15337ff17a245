// caps/schema: the JSON-schema subset tool parameters use, checked twice: once
// when the registry is built (checkSchema: the schema itself makes sense, else a
// programming error at start-up) and on every call (checkValue: the model's
// arguments fit, else a phrase naming the field, which the registry sends back to
// the model as an is_error result).
//
// Known limits: the keywords are type, properties, required, enum, minimum,
// maximum, minLength, maxLength, items, minItems, maxItems and
// additionalProperties: false, nested up to TOOL_SCHEMA_MAX_DEPTH; anything else
// ($ref, oneOf, pattern, format) is passed to the model but not checked here.
import { TOOL_ARGUMENT_PREVIEW_CHARS, TOOL_SCHEMA_MAX_DEPTH } from "budgets";
import type { JsonObject, JsonValue } from "llm/types";

const SCHEMA_TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

/** text cut to TOOL_ARGUMENT_PREVIEW_CHARS, for quoting in errors and log lines. */
export function preview(text: string): string {
	return text.length > TOOL_ARGUMENT_PREVIEW_CHARS ? `${text.slice(0, TOOL_ARGUMENT_PREVIEW_CHARS)}…` : text;
}

/**
 * The code points in text, counted without building an array of them (a 64 KiB
 * argument spread into one-character strings would take 64 Ki slots).
 */
export function codePoints(text: string): number {
	let pairs = 0;
	for (let i = 0; i < text.length - 1; i++) {
		const unit = text.charCodeAt(i);
		if (unit >= 0xD800 && unit <= 0xDBFF) {
			const next = text.charCodeAt(i + 1);
			if (next >= 0xDC00 && next <= 0xDFFF) {
				pairs++;
				i++;
			}
		}
	}
	return text.length - pairs;
}

/** "a string", "an integer", ... for error phrases. */
export function kindOf(value: JsonValue | undefined): string {
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

/** Construction-time check: the parts checkValue reads must make sense. Throws naming where. */
export function checkSchema(schema: JsonObject, where: string, depth: number): void {
	if (depth > TOOL_SCHEMA_MAX_DEPTH) throw new Error(`caps: ${where} nests deeper than ${TOOL_SCHEMA_MAX_DEPTH} levels`);
	const types = schema.type === undefined ? [] : typesOf(schema);
	if (!types || types.some((t) => !SCHEMA_TYPES.has(t))) throw new Error(`caps: ${where} has an unknown type ${JSON.stringify(schema.type)}`);
	if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === "string")))
		throw new Error(`caps: ${where}.required must be a list of property names`);
	if (schema.enum !== undefined && !(Array.isArray(schema.enum) && schema.enum.length)) throw new Error(`caps: ${where}.enum must be a non-empty list`);
	const properties = asSchema(schema.properties);
	if (schema.properties !== undefined && !properties) throw new Error(`caps: ${where}.properties must be an object`);
	for (const [key, sub] of Object.entries(properties ?? {})) {
		const child = asSchema(sub);
		if (!child) throw new Error(`caps: ${where}.properties.${key} must be a schema object`);
		checkSchema(child, `${where}.${key}`, depth + 1);
	}
	if (schema.items !== undefined) {
		const items = asSchema(schema.items);
		if (!items) throw new Error(`caps: ${where}.items must be a schema object`);
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

/**
 * The first problem of value against schema, as a phrase naming the path; undefined when it fits.
 * Runs on every tool call: nothing is made while the value fits (no type list,
 * entry pairs or stringified value), only the phrase of a problem found.
 */
export function checkValue(value: JsonValue, schema: JsonObject, path: string, depth: number): string | undefined {
	if (depth > TOOL_SCHEMA_MAX_DEPTH) return undefined; // checkSchema refused deeper schemas; values deeper than those are free
	if (!fitsSchemaType(value, schema.type)) {
		const types = typesOf(schema)!;
		return `${path} must be ${types.map((t) => (t === "integer" ? "an integer" : t === "array" || t === "object" ? `an ${t}` : t === "null" ? "null" : `a ${t}`)).join(" or ")}, not ${kindOf(value)}`;
	}
	if (Array.isArray(schema.enum)) {
		if (!schema.enum.some((option) => sameJson(option, value))) return `${path} must be one of ${schema.enum.map(shown).join(", ")}, not ${shown(value)}`;
	}
	if (typeof value === "number") {
		if (typeof schema.minimum === "number" && value < schema.minimum) return `${path} must be at least ${schema.minimum}, not ${value}`;
		if (typeof schema.maximum === "number" && value > schema.maximum) return `${path} must be at most ${schema.maximum}, not ${value}`;
	}
	if (typeof value === "string" && (typeof schema.minLength === "number" || typeof schema.maxLength === "number")) {
		// Lengths in code points, as JSON Schema counts them.
		const length = codePoints(value);
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
		const properties = asSchema(schema.properties) ?? NO_PROPERTIES;
		if (Array.isArray(schema.required)) {
			for (const key of schema.required) if (typeof key === "string" && !hasOwn(value, key)) return `${path}.${key} is required`;
		}
		const keys = Object.keys(value);
		for (let k = 0; k < keys.length; k++) {
			const key = keys[k];
			const sub = hasOwn(properties, key) ? asSchema(properties[key]) : undefined;
			if (sub) {
				const problem = checkValue(value[key], sub, path.concat(".", key), depth + 1);
				if (problem) return problem;
			} else if (schema.additionalProperties === false) {
				return `${path} has no property "${preview(key)}" (known: ${Object.keys(properties).join(", ") || "none"})`;
			}
		}
	}
	return undefined;
}

const NO_PROPERTIES: JsonObject = Object.freeze({}) as JsonObject;

/**
 * JSON Schema's equality: the same type, numbers by value, arrays item by item,
 * objects by the same keys with equal values in any order (JSON.stringify would make
 * {"b":2,"a":1} differ from {"a":1,"b":2}). The walk follows `option` (a schema's
 * enum member), so a deep value costs no more than the option; past
 * TOOL_SCHEMA_MAX_DEPTH levels (a deep member from a schema written elsewhere) the
 * rest is compared as JSON text, which has no recursion of ours.
 */
export function sameJson(option: JsonValue, value: JsonValue, depth = 0): boolean {
	if (option === value) return true;
	if (typeof option !== "object" || typeof value !== "object" || option === null || value === null) return false;
	if (depth > TOOL_SCHEMA_MAX_DEPTH) return JSON.stringify(option) === JSON.stringify(value);
	if (Array.isArray(option)) {
		if (!Array.isArray(value) || value.length !== option.length) return false;
		for (let i = 0; i < option.length; i++) if (!sameJson(option[i], value[i], depth + 1)) return false;
		return true;
	}
	if (Array.isArray(value)) return false;
	const keys = Object.keys(option);
	if (keys.length !== Object.keys(value).length) return false;
	for (let k = 0; k < keys.length; k++) {
		const key = keys[k];
		if (!hasOwn(value, key) || !sameJson(option[key], value[key], depth + 1)) return false;
	}
	return true;
}

/** Whether value has one of the types a schema names (true when its type is not a name or list of names: typesOf's undefined, not checked). */
function fitsSchemaType(value: JsonValue, type: JsonValue | undefined): boolean {
	if (typeof type === "string") return fitsType(value, type);
	if (!Array.isArray(type)) return true;
	for (let i = 0; i < type.length; i++) if (typeof type[i] !== "string") return true;
	for (let i = 0; i < type.length; i++) if (fitsType(value, type[i] as string)) return true;
	return false;
}

// llm/json: small readers for untrusted JSON from providers. They never throw on a
// wrong shape; callers decide what a missing field means.
import type { JsonObject, JsonValue, Usage } from "llm/types";
import { isObject as isPlainObject } from "util/values";

/** util/values' isObject, typed for parsed JSON. */
export const isObject = isPlainObject as (value: unknown) => value is JsonObject;

export function objectAt(value: unknown, key: string): JsonObject | undefined {
	const v = isObject(value) ? value[key] : undefined;
	return isObject(v) ? v : undefined;
}

export function arrayAt(value: unknown, key: string): JsonValue[] | undefined {
	const v = isObject(value) ? value[key] : undefined;
	return Array.isArray(v) ? v : undefined;
}

export function stringAt(value: unknown, key: string): string | undefined {
	const v = isObject(value) ? value[key] : undefined;
	return typeof v === "string" ? v : undefined;
}

export function numberAt(value: unknown, key: string): number {
	const v = isObject(value) ? value[key] : undefined;
	return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0;
}

/** Parses JSON text; undefined when it is not JSON. */
export function parseJson(text: string): JsonValue | undefined {
	try {
		return JSON.parse(text) as JsonValue;
	} catch {
		return undefined;
	}
}

export function emptyUsage(): Usage {
	return { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
}

// testing: the unit-test harness that runs inside XS (test/lib/run.ts drives it).
// A test file registers tests with test(); each runs in order, async allowed,
// bounded by a timeout. Assertions throw AssertionError with a readable message.

export type TestFn = () => void | Promise<void>;
export interface TestCase { name: string; fn: TestFn; timeoutMs: number }

export const tests: TestCase[] = [];
// A bound for a hang, not a speed target: the ASan host on a loaded machine is
// slow (speed is measured by npm run bench).
export const DEFAULT_TEST_TIMEOUT_MS = 60_000;

export function test(name: string, fn: TestFn, timeoutMs = DEFAULT_TEST_TIMEOUT_MS): void {
	if (tests.some((t) => t.name === name)) throw new Error(`duplicate test name: ${name}`);
	tests.push({ name, fn, timeoutMs });
}

const failureNotes: string[] = [];

/** A line every failing test of this run adds to its message (test/fuzz: the seed and how to replay it); once per text. */
export function noteOnFailure(text: string): void {
	if (!failureNotes.includes(text)) failureNotes.push(text);
}

/** What noteOnFailure gathered, joined; "" when nothing. */
export function failureNote(): string {
	return failureNotes.join("; ");
}

export class AssertionError extends Error {
	override name = "AssertionError";
}

function show(value: unknown): string {
	if (typeof value === "string") return JSON.stringify(value);
	if (value instanceof ArrayBuffer) return `ArrayBuffer(${value.byteLength})`;
	try {
		const text = JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
		return text === undefined ? String(value) : text;
	} catch {
		return String(value);
	}
}

function isDeepEqual(a: unknown, b: unknown): boolean {
	if (Object.is(a, b)) return true;
	if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
	if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
		const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
		const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
		return x.length === y.length && x.every((v, i) => v === y[i]);
	}
	if (Array.isArray(a) !== Array.isArray(b)) return false;
	const ka = Object.keys(a), kb = Object.keys(b);
	if (ka.length !== kb.length) return false;
	return ka.every((k) => isDeepEqual((a as any)[k], (b as any)[k]));
}

function errorMatches(error: unknown, expected?: RegExp | string): boolean {
	if (expected === undefined) return true;
	const message = error instanceof Error ? error.message : String(error);
	return typeof expected === "string" ? message.includes(expected) : expected.test(message);
}

export const assert = {
	ok(value: unknown, message = "expected a truthy value"): void {
		if (!value) throw new AssertionError(`${message} (got ${show(value)})`);
	},
	equal<T>(actual: T, expected: T, message = "values differ"): void {
		if (!Object.is(actual, expected)) throw new AssertionError(`${message}: expected ${show(expected)}, got ${show(actual)}`);
	},
	notEqual<T>(actual: T, expected: T, message = "values are equal"): void {
		if (Object.is(actual, expected)) throw new AssertionError(`${message}: both ${show(actual)}`);
	},
	deepEqual(actual: unknown, expected: unknown, message = "values differ"): void {
		if (!isDeepEqual(actual, expected)) throw new AssertionError(`${message}: expected ${show(expected)}, got ${show(actual)}`);
	},
	match(actual: string, pattern: RegExp, message = "no match"): void {
		if (!pattern.test(actual)) throw new AssertionError(`${message}: ${show(actual)} does not match ${pattern}`);
	},
	throws(fn: () => unknown, expected?: RegExp | string, errorClass?: Function): void {
		try {
			fn();
		} catch (error) {
			if (errorClass && !(error instanceof errorClass)) throw new AssertionError(`wrong error class: ${String(error)}`);
			if (!errorMatches(error, expected)) throw new AssertionError(`wrong error: ${String(error)}, expected ${String(expected)}`);
			return;
		}
		throw new AssertionError(`expected an error${expected ? " matching " + String(expected) : ""}`);
	},
	async rejects(promise: Promise<unknown> | (() => Promise<unknown>), expected?: RegExp | string): Promise<Error> {
		try {
			await (typeof promise === "function" ? promise() : promise);
		} catch (error) {
			if (!errorMatches(error, expected)) throw new AssertionError(`wrong rejection: ${String(error)}, expected ${String(expected)}`);
			return error as Error;
		}
		throw new AssertionError(`expected a rejection${expected ? " matching " + String(expected) : ""}`);
	},
	fail(message: string): never {
		throw new AssertionError(message);
	},
};

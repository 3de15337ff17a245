// util/log: the one logger of a machine (the main machine, and the agent machine
// behind the port, each has its own instance of this module). Every log line of
// the firmware goes through logLine() (or log(), at level info): it is dropped
// below the level in force (`log level` on the console, setting log.level), and
// every secret registered with setLogSecrets() (the values of the settings
// declared secret: API keys, the bot token, which travels in every Telegram URL
// path) is replaced by its masked form (util/secrets) wherever it appears, so a
// secret echoed by a server or put into a message by mistake never reaches the
// log. Every form a secret takes on the way out is masked (util/secrets
// secretForms: as it is and JSON-escaped), each by its mask in the same form, so
// masked JSON stays JSON. On lin the sink is stderr (trace). On the board trace()
// reaches no one a release build's owner sees (the SDK sends it to xsbug in a
// debug build, to ESP-IDF's stdout, not the console's UART, in a release one),
// so there the main machine writes log lines to the console, and the agent
// machine sends its own over the port for main to write (main.ts,
// agent/worker: where host/platform's consoleKind is "uart").
import { LOG_MASK_DEPTH_MAX, LOG_SECRET_MIN_CHARS, LOG_SECRETS_MAX } from "budgets";
import { SECRET_FORMS_MAX, findPrinted, printedMask, secretForms, type SecretForm, type SecretPrint } from "util/secrets";

export const LOG_LEVELS = Object.freeze(["error", "warn", "info", "debug"] as const);
export type LogLevel = (typeof LOG_LEVELS)[number];

let threshold = LOG_LEVELS.indexOf("info");
let secrets: SecretForm[] = [];
let prints: SecretPrint[] = [];
let sink = (line: string) => trace(`${line}\n`);

/** The level in force. */
export function logLevel(): LogLevel {
	return LOG_LEVELS[threshold];
}

/** Sets the level; throws a sentence for a name that is not a level. */
export function setLogLevel(level: string): void {
	const at = LOG_LEVELS.indexOf(level as LogLevel);
	if (at < 0) throw new RangeError(`"${level}" is not a log level: use one of ${LOG_LEVELS.join(", ")}`);
	threshold = at;
}

/**
 * Replaces the secrets masked in every line (values shorter than
 * LOG_SECRET_MIN_CHARS are skipped: masking "1" would garble every number; at
 * most LOG_SECRETS_MAX, the longest first so one secret inside another is masked whole).
 */
export function setLogSecrets(values: Iterable<string>): void {
	const kept = [...new Set(values)].filter((v) => v.length >= LOG_SECRET_MIN_CHARS).sort((a, b) => b.length - a.length).slice(0, LOG_SECRETS_MAX);
	const forms: SecretForm[] = [];
	for (const value of kept) forms.push(...secretForms(value));
	secrets = forms.sort((a, b) => b.text.length - a.text.length);
}

/**
 * Registers the fingerprints of secrets this machine does not hold (the
 * agent machine's view of the channels' secrets: util/secrets); text matching
 * one is masked like a registered secret. Shorter than LOG_SECRET_MIN_CHARS
 * are skipped, at most LOG_SECRETS_MAX.
 */
export function setLogPrints(values: readonly SecretPrint[]): void {
	prints = values.filter((p) => p.length >= LOG_SECRET_MIN_CHARS).slice(0, LOG_SECRETS_MAX * SECRET_FORMS_MAX);
}

/** text with every registered secret (and fingerprinted one) masked. */
export function maskSecrets(text: string): string {
	let out = text;
	for (const secret of secrets) if (out.includes(secret.text)) out = out.split(secret.text).join(secret.mask);
	if (!prints.length) return out;
	const ranges = findPrinted(out, prints);
	for (let i = ranges.length - 1; i >= 0; i--) {
		const [start, end] = ranges[i];
		out = out.slice(0, start) + printedMask(out.slice(start, end), prints) + out.slice(end);
	}
	return out;
}

/**
 * Text still growing (a streamed reply's preview) as it may be shown: every
 * registered secret masked, and a tail that could be the start of one cut off,
 * so no preview ever shows part of a secret (the whole one is masked once it
 * has arrived).
 */
export function maskSecretsGrowing(text: string): string {
	const out = maskSecrets(text);
	let cut = 0;
	for (const { text: secret } of secrets) {
		for (let k = Math.min(secret.length - 1, out.length); k > cut; k--) {
			if (out.endsWith(secret.slice(0, k))) {
				cut = k;
				break;
			}
		}
	}
	return cut ? out.slice(0, out.length - cut) : out;
}

/**
 * A JSON-able value (a model's message, raw provider blocks, a port message) with
 * every registered secret masked in each of its strings, in every form
 * (maskSecrets): a string holding JSON text (a tool call's arguments) has the
 * escaped form. Only plain objects and arrays are walked (a byte array is left as
 * it is); what holds no secret is returned as it is, the value itself when
 * nothing does. Nesting past LOG_MASK_DEPTH_MAX (no message nests so deep) is
 * masked as JSON text, one form deeper.
 */
export function maskSecretsDeep<T>(value: T): T {
	if (!secrets.length && !prints.length) return value;
	return maskedValue(value, 0) as T;
}

function maskedValue(value: unknown, depth: number): unknown {
	if (typeof value === "string") return maskSecrets(value);
	if (typeof value !== "object" || value === null) return value;
	const array = Array.isArray(value);
	if (!array && Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
	if (depth >= LOG_MASK_DEPTH_MAX) {
		const json = JSON.stringify(value);
		const masked = maskSecrets(json);
		if (masked === json) return value;
		try {
			return JSON.parse(masked);
		} catch {
			return "(a value that held a secret)";
		}
	}
	if (array) {
		const list = value as unknown[];
		let out: unknown[] | undefined = undefined;
		for (let i = 0; i < list.length; i++) {
			const item = maskedValue(list[i], depth + 1);
			if (item !== list[i]) (out ??= list.slice())[i] = item;
		}
		return out ?? value;
	}
	const record = value as Record<string, unknown>;
	let out: Record<string, unknown> | undefined = undefined;
	for (const key of Object.keys(record)) {
		const item = maskedValue(record[key], depth + 1);
		if (item !== record[key]) (out ??= { ...record })[key] = item;
	}
	return out ?? value;
}

/** For tests: where lines go (default: trace). */
export function setLogSink(write: (line: string) => void): void {
	sink = write;
}

// The last lines logged, masked, for whoever shows them (the web console's log
// page): kept only once someone asks (keepLogTail), at most that many.
let tail: string[] | undefined;
let tailMax = 0;

/** Keeps the last `lines` log lines (masked) from now on, for logTail(). */
export function keepLogTail(lines: number): void {
	tail ??= [];
	tailMax = lines;
}

/** The last lines logged since keepLogTail, oldest first. */
export function logTail(): readonly string[] {
	return tail ?? [];
}

/** One log line at a level; never throws. */
export function logLine(level: LogLevel, text: string): void {
	if (LOG_LEVELS.indexOf(level) > threshold) return;
	try {
		const masked = maskSecrets(text);
		if (tail) {
			if (tail.length >= tailMax) tail.shift();
			tail.push(masked);
		}
		sink(masked);
	} catch {
		// A failing sink has nowhere to report to.
	}
}

/** A line another machine logged (its level applied, its secrets masked): written
 * as it is, with this machine's secrets masked too. Never throws. */
export function logRelayed(line: string): void {
	try {
		const masked = maskSecrets(line);
		if (tail) {
			if (tail.length >= tailMax) tail.shift();
			tail.push(masked);
		}
		sink(masked);
	} catch {
		// A failing sink has nowhere to report to.
	}
}

/** One log line at level info (the `log` option most modules take). */
export function log(text: string): void {
	logLine("info", text);
}

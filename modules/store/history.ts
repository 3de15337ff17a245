// store/history: turns stored records into the history a prompt gets (SPEC §6):
// the newest records within a byte budget, oldest first, each message capped,
// an assistant tool call never separated from its results. Pure functions over
// records already read; store/sessions does the reading.
import type { Message, StoredRef } from "llm/types";
import type { StoredRecord } from "store/session";
import { byteLength, capMessage } from "store/messages";

/** A record as the prompt gets it: its message capped (failure notes are assistant messages already), and that message's JSON size. */
export interface PromptRecord { kind: StoredRecord["kind"]; message: Message; bytes: number }

/** Caps a record's message and measures it, once. */
export function promptRecord(record: StoredRecord, capBytes: number): PromptRecord {
	const message = capMessage(record.message, capBytes);
	return { kind: record.kind, message, bytes: byteLength(JSON.stringify(message)) };
}

/** Whether a message holds image parts, and whether any is local (not http(s)). */
export function imagesOf(message: Message): StoredRef["images"] {
	if (message.role !== "user" || typeof message.content === "string") return undefined;
	let found: StoredRef["images"] = undefined;
	for (const part of message.content) {
		if (part.type !== "image_url") continue;
		if (!/^https?:/i.test(part.image_url.url)) return "local";
		found = "remote";
	}
	return found;
}

/** The function of every placeholder tool call (only the ids pair calls with results): one frozen object, not one per call. */
const NO_FUNCTION = Object.freeze({ name: "", arguments: "" });

/**
 * The placeholder of a stored message (llm/types StoredRef): its role and the
 * ids that pair tool calls with results, no content; the bytes stay in the store.
 */
export function placeholder(message: Message, stored: StoredRef): Message {
	switch (message.role) {
		case "user": return { role: "user", content: "", stored };
		case "tool": return { role: "tool", tool_call_id: message.tool_call_id, content: "", stored };
		case "assistant": {
			const out: Message = { role: "assistant", content: null, stored };
			if (message.tool_calls) out.tool_calls = message.tool_calls.map((c) => ({ id: c.id, type: "function", function: NO_FUNCTION }));
			return out;
		}
		case "system": return message;
	}
}

/**
 * The newest units that fit budgetBytes together, oldest first; stops at the
 * first that does not fit. The window then starts at a user message: an answer
 * or a tool round whose question fell out is left out too, since a history that
 * opens with the assistant reads as an answer to nothing (and Anthropic wants a
 * user message first).
 */
export function selectHistory(records: StoredRecord[], budgetBytes: number, capBytes: number): Message[] {
	return selectPromptHistory(records.map((r) => promptRecord(r, capBytes)), budgetBytes);
}

/** selectHistory over records already capped and measured (promptRecord). */
export function selectPromptHistory(records: PromptRecord[], budgetBytes: number): Message[] {
	return selectWindow((i) => records[i], 0, records.length, budgetBytes);
}

// The kinds and roles compared in the loops below, named once (these loops run over
// hundreds of records per request; the lin host once copied a string literal into the
// heap at each evaluation, which it no longer does).
const TOOL_RESULT = "tool_result", ASSISTANT_TOOL = "assistant_tool", USER = "user", TOOL = "tool", ASSISTANT = "assistant";

/**
 * Whether a tool call record and the tool results at [first, stop) (the records
 * there, all tool results) make a whole round: every call answered, every result
 * a call's. Plain loops over indexes: no closure, array or iterator per round
 * (it runs for every round of the window, twice, per request).
 */
function wholeRound(at: (i: number) => PromptRecord | undefined, call: number, first: number, stop: number): boolean {
	const message = at(call)!.message;
	const calls = message.role === ASSISTANT ? message.tool_calls : undefined;
	if (!calls || !calls.length) return false;
	for (let c = 0; c < calls.length; c++) {
		let answered = false;
		for (let r = first; r < stop && !answered; r = above(at, r, stop)) {
			const m = at(r)!.message;
			answered = m.role === TOOL && m.tool_call_id === calls[c].id;
		}
		if (!answered) return false;
	}
	for (let r = first; r < stop; r = above(at, r, stop)) {
		const m = at(r)!.message;
		if (m.role !== TOOL) return false;
		let known = false;
		for (let c = 0; c < calls.length && !known; c++) known = calls[c].id === m.tool_call_id;
		if (!known) return false;
	}
	return true;
}

/** The index of the record before i (below start: none). */
function below(at: (i: number) => PromptRecord | undefined, i: number, start: number): number {
	do i--; while (i >= start && !at(i));
	return i;
}

/** The index of the record after i (end: none). */
function above(at: (i: number) => PromptRecord | undefined, i: number, end: number): number {
	do i++; while (i < end && !at(i));
	return i;
}

/**
 * Where the window over the records at indexes [start, end) starts (at(i)
 * undefined: no record there): the newest units are taken walking back until
 * one does not fit, then the window opens at the oldest user message among
 * them (end: an empty window). A unit is one message, or a tool call with every
 * one of its results; a call missing a result and results with no call before
 * them are left out (a round cut by a power loss or a crash). Allocates nothing.
 */
export function windowStart(at: (i: number) => PromptRecord | undefined, start: number, end: number, budgetBytes: number): number {
	let used = 0;
	let from = end;
	// Back from the newest: each pass consumes at least one record, so bounded by end - start.
	for (let i = below(at, end, start); i >= start;) {
		const record = at(i)!;
		let unitStart = i, bytes = record.bytes, keep = true;
		if (record.kind === TOOL_RESULT) {
			let first = i;
			for (let j = below(at, i, start); j >= start && at(j)!.kind === TOOL_RESULT; j = below(at, j, start)) {
				bytes += at(j)!.bytes;
				first = j;
			}
			const call = below(at, first, start);
			if (call >= start && at(call)!.kind === ASSISTANT_TOOL) {
				unitStart = call;
				keep = wholeRound(at, call, first, i + 1);
				bytes += at(call)!.bytes;
			} else {
				unitStart = first;   // results with no call before them
				keep = false;
			}
		} else if (record.kind === ASSISTANT_TOOL) {
			keep = false;           // a call with no results after it
		}
		if (keep) {
			if (used + bytes > budgetBytes) break;
			used += bytes;
			if (at(unitStart)!.message.role === USER) from = unitStart;
		}
		i = below(at, unitStart, start);
	}
	return from;
}

/**
 * Pushes onto out the messages of the units at [from, end), oldest first (see
 * windowStart; from must be where a unit starts). Pushes alone while it runs, so
 * XS grows out in place.
 */
export function windowMessages(at: (i: number) => PromptRecord | undefined, from: number, end: number, out: Message[]): void {
	for (let i = from; i < end;) {
		const record = at(i);
		if (!record) {
			i++;
			continue;
		}
		if (record.kind === TOOL_RESULT) {
			i = above(at, i, end);   // results with no call before them
			continue;
		}
		if (record.kind !== ASSISTANT_TOOL) {
			out.push(record.message);
			i = above(at, i, end);
			continue;
		}
		const first = above(at, i, end);
		let j = first;
		while (j < end && at(j)!.kind === TOOL_RESULT) j = above(at, j, end);
		if (wholeRound(at, i, first, j)) {
			out.push(record.message);
			for (let r = first; r < j; r = above(at, r, j)) out.push(at(r)!.message);
		}
		i = j;
	}
}

/**
 * selectPromptHistory over the records at indexes [start, end): windowStart,
 * then the window's messages in one pass forward. Costs two passes and one
 * array of the messages given.
 */
export function selectWindow(at: (i: number) => PromptRecord | undefined, start: number, end: number, budgetBytes: number): Message[] {
	const out: Message[] = [];
	windowMessages(at, windowStart(at, start, end, budgetBytes), end, out);
	return out;
}

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
	return selectWindow({ items: records, offset: 0, mask: -1 }, 0, records.length, budgetBytes);
}

/**
 * Records by index for the window's loops: the record at index i is
 * items[(offset + i) & mask], null or undefined where there is none: a
 * util/run KeyedRun's view of its ring, or a plain array (offset 0, mask -1).
 * The loops below read it inline, never through a function per record: in XS a
 * call costs far more than the lookup (with a function per lookup, the window
 * of a 40-record session took ~0.8 million instructions a request).
 */
export interface RecordsView {
	readonly items: ReadonlyArray<PromptRecord | null | undefined>;
	readonly offset: number;
	readonly mask: number;
}

// The kinds and roles compared in the loops below, named once (these loops run over
// hundreds of records per request; the lin host once copied a string literal into the
// heap at each evaluation, which it no longer does).
const TOOL_RESULT = "tool_result", ASSISTANT_TOOL = "assistant_tool", USER = "user", TOOL = "tool", ASSISTANT = "assistant";

/**
 * Whether a tool call record and the tool results at [first, stop) (the records
 * there, all tool results) make a whole round: every call answered, every result
 * a call's. Plain loops over indexes: no closure, array or iterator per round
 * (it runs for every round of the window, twice, per request). The next record
 * is found inline (`do r++; while (r < stop && !record)`), as everywhere here.
 */
function wholeRound(view: RecordsView, call: number, first: number, stop: number): boolean {
	const { items, offset, mask } = view;
	const message = items[(offset + call) & mask]!.message;
	const calls = message.role === ASSISTANT ? message.tool_calls : undefined;
	const count = calls ? calls.length : 0;
	if (!count) return false;
	for (let c = 0; c < count; c++) {
		const id = calls![c].id;
		let answered = false;
		for (let r = first; r < stop && !answered;) {
			const m = items[(offset + r) & mask]!.message;
			answered = m.role === TOOL && m.tool_call_id === id;
			do r++; while (r < stop && !items[(offset + r) & mask]);
		}
		if (!answered) return false;
	}
	for (let r = first; r < stop;) {
		const m = items[(offset + r) & mask]!.message;
		if (m.role !== TOOL) return false;
		let known = false;
		for (let c = 0; c < count && !known; c++) known = calls![c].id === m.tool_call_id;
		if (!known) return false;
		do r++; while (r < stop && !items[(offset + r) & mask]);
	}
	return true;
}

/**
 * Where the window over the records at indexes [start, end) starts: the newest
 * units are taken walking back until one does not fit, then the window opens at
 * the oldest user message among them (end: an empty window). A unit is one
 * message, or a tool call with every one of its results; a call missing a result
 * and results with no call before them are left out (a round cut by a power loss
 * or a crash). Allocates nothing. A KeyedRun's view must hold every index of
 * [start, end) (each set, if only to null).
 */
export function windowStart(view: RecordsView, start: number, end: number, budgetBytes: number): number {
	const { items, offset, mask } = view;
	let used = 0;
	let from = end;
	let i = end;
	do i--; while (i >= start && !items[(offset + i) & mask]);
	// Back from the newest: each pass consumes at least one record, so bounded by end - start.
	while (i >= start) {
		const record = items[(offset + i) & mask]!;
		let unitStart = i, bytes = record.bytes, keep = true;
		if (record.kind === TOOL_RESULT) {
			let first = i;
			let j = i;
			do j--; while (j >= start && !items[(offset + j) & mask]);
			for (; j >= start && items[(offset + j) & mask]!.kind === TOOL_RESULT;) {
				bytes += items[(offset + j) & mask]!.bytes;
				first = j;
				do j--; while (j >= start && !items[(offset + j) & mask]);
			}
			// j: the record before the results (below start: none).
			const call = j >= start ? items[(offset + j) & mask]! : undefined;
			if (call && call.kind === ASSISTANT_TOOL) {
				unitStart = j;
				keep = wholeRound(view, j, first, i + 1);
				bytes += call.bytes;
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
			if (items[(offset + unitStart) & mask]!.message.role === USER) from = unitStart;
		}
		i = unitStart;
		do i--; while (i >= start && !items[(offset + i) & mask]);
	}
	return from;
}

/**
 * Pushes onto out the messages of the units at [from, end), oldest first (see
 * windowStart; from must be where a unit starts). Pushes alone while it runs, so
 * XS grows out in place.
 */
export function windowMessages(view: RecordsView, from: number, end: number, out: Message[]): void {
	const { items, offset, mask } = view;
	for (let i = from; i < end;) {
		const record = items[(offset + i) & mask];
		if (!record) {
			i++;
			continue;
		}
		if (record.kind !== ASSISTANT_TOOL) {
			// Results with no call before them are left out.
			if (record.kind !== TOOL_RESULT) out.push(record.message);
			do i++; while (i < end && !items[(offset + i) & mask]);
			continue;
		}
		let first = i;
		do first++; while (first < end && !items[(offset + first) & mask]);
		let j = first;
		while (j < end && items[(offset + j) & mask]!.kind === TOOL_RESULT) {
			do j++; while (j < end && !items[(offset + j) & mask]);
		}
		if (wholeRound(view, i, first, j)) {
			out.push(record.message);
			for (let r = first; r < j;) {
				out.push(items[(offset + r) & mask]!.message);
				do r++; while (r < j && !items[(offset + r) & mask]);
			}
		}
		i = j;
	}
}

/**
 * selectPromptHistory over the records at indexes [start, end): windowStart,
 * then the window's messages in one pass forward. Costs two passes and one
 * array of the messages given.
 */
export function selectWindow(view: RecordsView, start: number, end: number, budgetBytes: number): Message[] {
	const out: Message[] = [];
	windowMessages(view, windowStart(view, start, end, budgetBytes), end, out);
	return out;
}

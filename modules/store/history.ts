// store/history: turns stored records into the history a prompt gets (SPEC §6):
// the newest records within a byte budget, oldest first, each message capped,
// an assistant tool call never separated from its results. Pure functions over
// records already read; store/sessions does the reading.
import type { Message, StoredRef } from "llm/types";
import type { StoredRecord } from "store/session";
import { byteLength, capMessage } from "store/messages";

/** A piece of history that goes in or out whole: one message, or a tool round (call + every result). */
interface Unit { messages: Message[]; bytes: number }

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
			if (message.tool_calls) out.tool_calls = message.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: "", arguments: "" } }));
			return out;
		}
		case "system": return message;
	}
}

/**
 * Groups records (oldest first) into units, dropping what must not reach a
 * prompt: an assistant tool call without all of its results (a round cut by a
 * power loss or a crash), and tool results with no call before them.
 */
export function historyUnits(records: PromptRecord[]): { units: Unit[]; dropped: number } {
	const units: Unit[] = [];
	let dropped = 0;
	let i = 0;
	// Each pass consumes at least one record: bounded by records.length.
	while (i < records.length) {
		const record = records[i];
		if (record.kind === "tool_result") {
			dropped++;
			i++;
			continue;
		}
		if (record.kind !== "assistant_tool") {
			units.push({ messages: [record.message], bytes: record.bytes });
			i++;
			continue;
		}
		const call = record.message;
		const wanted = new Set(call.role === "assistant" ? (call.tool_calls ?? []).map((c) => c.id) : []);
		const results: PromptRecord[] = [];
		let j = i + 1;
		for (; j < records.length && records[j].kind === "tool_result"; j++) results.push(records[j]);
		const answered = new Set(results.map((r) => (r.message.role === "tool" ? r.message.tool_call_id : "")));
		const whole = wanted.size > 0 && [...wanted].every((id) => answered.has(id)) && results.every((r) => r.message.role === "tool" && wanted.has(r.message.tool_call_id));
		if (whole) {
			const round = [record, ...results];
			units.push({ messages: round.map((r) => r.message), bytes: round.reduce((n, r) => n + r.bytes, 0) });
		} else {
			dropped += 1 + results.length;
		}
		i = j;
	}
	return { units, dropped };
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
	const { units } = historyUnits(records);
	let used = 0;
	let first = units.length;
	while (first > 0 && used + units[first - 1].bytes <= budgetBytes) used += units[--first].bytes;
	while (first < units.length && units[first].messages[0].role !== "user") first++;
	return units.slice(first).flatMap((u) => u.messages);
}

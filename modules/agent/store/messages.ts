// store/messages: caps a canonical message to a byte size while keeping it a
// valid message (used at 4096 bytes for the prompt, and at the record limit on
// write). Order of what goes: the raw provider message and the reasoning first
// (they only help when whole), then images, then the text is cut with a note of
// how much was left out, then over-long tool arguments are replaced by a small
// JSON object saying so (arguments stay valid JSON).
import type { Message } from "llm/types";
import { utf8Boundary } from "net/utf8";
import { byteLength } from "util/files";

const CAP_ATTEMPTS = 4;           // re-measurements after a cut; JSON escaping makes the first estimate short
const CAP_SLACK_BYTES = 32;       // extra cut per attempt, so the loop converges

export { byteLength };

function jsonBytes(message: Message): number {
	return byteLength(JSON.stringify(message));
}

/** text's longest prefix of at most maxBytes UTF-8 bytes, never splitting a character. */
export function utf8Prefix(text: string, maxBytes: number): string {
	if (maxBytes <= 0) return "";
	const bytes = new Uint8Array(ArrayBuffer.fromString(text));
	if (bytes.length <= maxBytes) return text;
	const end = utf8Boundary(bytes, maxBytes);
	return String.fromArrayBuffer(bytes.buffer.slice(0, end) as ArrayBuffer);
}

function contentText(message: Message): string | undefined {
	const content = message.content;
	if (typeof content === "string") return content;
	if (Array.isArray(content)) return content.map((part) => (part.type === "text" ? part.text : "[image left out]")).join("\n");
	return undefined;
}

/**
 * True when message's JSON is surely over maxBytes, known without making it: its
 * text, reasoning or tool arguments alone have more characters (a character is
 * at least a byte, and JSON escaping only adds). A long reply is then capped
 * without its whole JSON (and the raw copy's) ever being in the heap.
 */
export function surelyOver(message: Message, maxBytes: number): boolean {
	const m = message as Message & { reasoning_content?: unknown };
	let chars = typeof m.content === "string" ? m.content.length : 0;
	if (typeof m.reasoning_content === "string") chars = Math.max(chars, m.reasoning_content.length);
	if (m.role === "assistant" && m.tool_calls) {
		let args = 0;
		for (let i = 0; i < m.tool_calls.length; i++) args += m.tool_calls[i].function.arguments.length;
		chars = Math.max(chars, args);
	}
	return chars > maxBytes;
}

/** The message itself when its JSON fits maxBytes; otherwise a smaller copy that does. */
export function capMessage(message: Message, maxBytes: number): Message {
	if (!surelyOver(message, maxBytes) && jsonBytes(message) <= maxBytes) return message;
	const copy = { ...message } as Message & { raw?: unknown; reasoning_content?: string; reasoning_signature?: string };
	delete copy.raw;
	delete copy.reasoning_content;
	delete copy.reasoning_signature;
	if (!surelyOver(copy, maxBytes) && jsonBytes(copy) <= maxBytes) return copy;
	const text = contentText(copy);
	if (text !== undefined) {
		// A start of at most maxBytes characters holds every prefix of at most maxBytes bytes: the rest is never measured as JSON.
		const head = text.length > maxBytes ? text.slice(0, maxBytes) : text;
		(copy as { content: string }).content = head;
		const full = byteLength(text);
		let noted = false;
		for (let attempt = 0; attempt < CAP_ATTEMPTS; attempt++) {
			const over = jsonBytes(copy) - maxBytes;
			if (over <= 0 && (noted || head === text)) return copy;
			const current = byteLength((copy as { content: string }).content);
			const keep = Math.max(0, current - Math.max(over, 0) - CAP_SLACK_BYTES * (attempt + 1) - 48);
			const prefix = utf8Prefix(head, keep);
			(copy as { content: string }).content = `${prefix}\n[… ${full - byteLength(prefix)} bytes left out]`;
			noted = true;
		}
		if (jsonBytes(copy) <= maxBytes) return copy;
		(copy as { content: string }).content = `[${full} bytes left out]`;
	}
	if (copy.role === "assistant" && copy.tool_calls) {
		copy.tool_calls = copy.tool_calls.map((call) => ({
			...call,
			function: { name: call.function.name, arguments: JSON.stringify({ left_out: `${byteLength(call.function.arguments)} bytes of arguments` }) },
		}));
	}
	return copy;
}

/** The cap on write: same rules; a message still over it after capping is stored as capped (bounded by its tool calls). */
export const capForStorage = capMessage;

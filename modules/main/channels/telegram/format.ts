// channels/telegram/format: an answer as Telegram messages. The model writes
// Markdown-ish text; Telegram's HTML parse mode understands a few tags. So:
// - chunk(): split at TELEGRAM_MESSAGE_MAX_CHARS on line boundaries (a longer
//   line is cut, never inside a surrogate pair); a ``` block split across two
//   chunks is closed at the end of the first and reopened in the second;
// - toHtml(): fenced blocks -> <pre><code>, `code` -> <code>, **bold** -> <b>,
//   [text](http...) -> <a href>; everything else is escaped (&, <, >, ").
// Chunking comes first, on the plain text, so each chunk's visible length (what
// Telegram limits) is at most the limit whether it is sent as HTML or, when
// Telegram rejects the markup, as the plain chunk itself.
import { TELEGRAM_CHUNK_RESERVE_CHARS, TELEGRAM_MESSAGE_MAX_CHARS } from "budgets";

export function escapeHtml(text: string): string {
	return text.replace(/[&<>"]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&quot;"));
}

const FENCE = /^\s*```/;

// Cut point at most max, never between a high and a low surrogate.
function safeCut(text: string, max: number): number {
	if (text.length <= max) return text.length;
	const code = text.charCodeAt(max - 1);
	return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

const ASTRAL = /[\u{10000}-\u{10FFFF}]/gu;

/** text's length as Telegram counts it, in UTF-16 units: XS's length counts a character above U+FFFF (an emoji) once, UTF-16 twice. */
export function units(text: string): number {
	let n = text.length;
	ASTRAL.lastIndex = 0;
	while (ASTRAL.exec(text)) n++;
	return n;
}

/**
 * text's longest start of at most max UTF-16 units (at least one character):
 * a character is one unit or two, so each step drops half the excess in
 * characters, at least one (a few steps).
 */
export function fitUnits(text: string, max: number): string {
	let cut = safeCut(text, max), head = text.slice(0, cut), over = units(head) - max;
	while (over > 0 && cut > 1) {
		cut = Math.max(1, cut - Math.ceil(over / 2));
		head = text.slice(0, cut);
		over = units(head) - max;
	}
	return head;
}

/** Splits text into chunks of at most max UTF-16 units (Telegram's count), on line boundaries where it can. */
export function chunk(text: string, max = TELEGRAM_MESSAGE_MAX_CHARS): string[] {
	const limit = Math.max(32, max - TELEGRAM_CHUNK_RESERVE_CHARS);
	const chunks: string[] = [];
	let current = "", currentUnits = 0;
	let inFence = false;
	let fenceOpen = "```";
	const flush = () => {
		if (inFence) current += "\n```";
		if (current.trim().length) chunks.push(current);
		current = inFence ? `${fenceOpen}\n` : "";
		currentUnits = units(current);
	};
	const lines = text.split("\n");
	for (let i = 0; i < lines.length; i++) {
		let line = lines[i] + (i < lines.length - 1 ? "\n" : "");
		let lineUnits = units(line);
		while (line.length) {
			const room = limit - currentUnits;
			if (lineUnits <= room) {
				current += line;
				currentUnits += lineUnits;
				line = "";
			} else if (current.length && current.length > (inFence ? fenceOpen.length + 1 : 0)) {
				flush();
			} else {
				const head = fitUnits(line, room);
				current += head;
				line = line.slice(head.length);
				lineUnits -= units(head);
				flush();
			}
		}
		if (FENCE.test(lines[i])) {
			inFence = !inFence;
			if (inFence) fenceOpen = lines[i].trim().slice(0, 24);
		}
	}
	inFence = false;
	if (current.trim().length) chunks.push(current);
	return chunks.length ? chunks : [text.slice(0, safeCut(text, limit))];
}

// Inline Markdown of one non-code line: `code`, **bold**, [text](url).
function inline(text: string): string {
	let out = "";
	const pattern = /`([^`\n]+)`|\*\*([^*\n]+)\*\*|\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g;
	let last = 0;
	for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
		out += escapeHtml(text.slice(last, m.index));
		if (m[1] !== undefined) out += `<code>${escapeHtml(m[1])}</code>`;
		else if (m[2] !== undefined) out += `<b>${escapeHtml(m[2])}</b>`;
		else out += `<a href="${escapeHtml(m[4])}">${escapeHtml(m[3])}</a>`;
		last = m.index + m[0].length;
	}
	return out + escapeHtml(text.slice(last));
}

/** One chunk as Telegram HTML. */
export function toHtml(text: string): string {
	const out: string[] = [];
	let code: string[] | undefined;
	let language = "";
	for (const line of text.split("\n")) {
		if (FENCE.test(line)) {
			if (code) {
				const cls = language ? ` class="language-${escapeHtml(language)}"` : "";
				out.push(`<pre><code${cls}>${escapeHtml(code.join("\n"))}</code></pre>`);
				code = undefined;
			} else {
				code = [];
				language = line.trim().slice(3).trim().replace(/[^\w+#-]/g, "").slice(0, 20);
			}
			continue;
		}
		if (code) code.push(line);
		else out.push(inline(line));
	}
	if (code) out.push(`<pre>${escapeHtml(code.join("\n"))}</pre>`);
	return out.join("\n");
}

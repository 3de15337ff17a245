// net/websocket/frame: RFC 6455 §5 framing for a client. encodeFrame builds a
// masked frame (a client masks every frame, §5.3); FrameParser takes the
// server's bytes in any split and hands on whole messages and control frames.
//
// FrameParser keeps a data message's payload, reassembled from its fragments,
// in one buffer from the injected BufferPool (the board's PSRAM pool): it
// starts at WS_MESSAGE_START_BYTES and doubles (in place when the pool can
// resize) up to the message cap. Control frames (at most 125 bytes) use a small
// heap buffer. Any violation throws a WebSocketError carrying the close code to
// send (1002 protocol, 1007 invalid UTF-8, 1009 too big); the parser is dead
// afterwards. release() gives the pool buffer back; call it when done. The
// message buffer is util/buffers' GrowableBuffer, as HTTP response bodies are.
import { WS_MESSAGE_FRAGMENTS_MAX, WS_MESSAGE_MAX_BYTES, WS_MESSAGE_START_BYTES } from "budgets";
import { sanitizeUtf8 } from "net/utf8";
import { WebSocketError } from "net/websocket/types";
import { GrowableBuffer, heapBuffers, type BufferPool } from "util/buffers";

export const enum Opcode { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 }

export interface FrameEvents {
	/** A whole data message; bytes is a view valid only during the call. Text is checked UTF-8. */
	onMessage(opcode: Opcode.Text | Opcode.Binary, bytes: Uint8Array): void;
	/** A control frame (close, ping, pong); payload is a view valid only during the call. */
	onControl(opcode: Opcode.Close | Opcode.Ping | Opcode.Pong, payload: Uint8Array): void;
}

/** Whether bytes[start, end) is well-formed UTF-8 (no overlongs, surrogates or truncation). */
export function isValidUtf8(bytes: Uint8Array, start = 0, end = bytes.length): boolean {
	// "wire" cleanliness is exactly strict UTF-8 (XS's C0 80 and ED A0.. forms are not clean).
	return sanitizeUtf8(bytes, "wire", start, end) === undefined;
}

/** One masked client frame: header, 4-byte key from mask, payload XORed with it. */
export function encodeFrame(opcode: Opcode, payload: Uint8Array, fin: boolean, mask: Uint8Array): Uint8Array {
	const length = payload.length;
	const extended = length < 126 ? 0 : length < 0x10000 ? 2 : 8;
	const head = 2 + extended + 4;
	const frame = new Uint8Array(head + length);
	frame[0] = (fin ? 0x80 : 0) | opcode;
	if (extended === 0) frame[1] = 0x80 | length;
	else if (extended === 2) {
		frame[1] = 0x80 | 126;
		frame[2] = length >> 8;
		frame[3] = length & 0xFF;
	} else {
		frame[1] = 0x80 | 127;
		const view = new DataView(frame.buffer);
		view.setUint32(2, Math.floor(length / 0x100000000));
		view.setUint32(6, length >>> 0);
	}
	frame.set(mask.subarray(0, 4), 2 + extended);
	for (let i = 0; i < length; i++) frame[head + i] = payload[i] ^ mask[i & 3];
	return frame;
}

const enum State { Header, Payload, Failed }

function protocol(why: string): WebSocketError {
	return new WebSocketError("protocol", `WebSocket protocol error from the server: ${why}`, 1002);
}

export class FrameParser {
	readonly #events: FrameEvents;
	readonly #maxMessage: number;
	#state = State.Header;
	readonly #header = new Uint8Array(14);
	#headerLength = 0;
	// the frame being read
	#opcode = 0;
	#fin = false;
	#remaining = 0;
	// the data message being reassembled
	#messageOpcode = 0;                // 0: none in progress
	#fragments = 0;
	readonly #message: GrowableBuffer;
	// the control frame being read
	readonly #control = new Uint8Array(125);
	#controlLength = 0;

	constructor(events: FrameEvents, options: { buffers?: BufferPool; maxMessageBytes?: number } = {}) {
		this.#events = events;
		this.#maxMessage = options.maxMessageBytes ?? WS_MESSAGE_MAX_BYTES;
		this.#message = new GrowableBuffer(options.buffers ?? heapBuffers, WS_MESSAGE_START_BYTES, this.#maxMessage,
			(size) => new WebSocketError("too_large", `no memory for a ${size}-byte WebSocket message buffer`, 1009));
	}

	/** Feeds bytes; throws WebSocketError on a violation (and stays failed). */
	feed(data: Uint8Array): void {
		if (this.#state === State.Failed) throw protocol("data after a failure");
		try {
			let i = 0;
			// A zero-length frame completes at its header, so loop while bytes remain
			// or a frame is ready to complete.
			while (i < data.length || (this.#state === State.Payload && this.#remaining === 0)) {
				if (this.#state === State.Header) i = this.#readHeader(data, i);
				else i = this.#readPayload(data, i);
			}
		} catch (error) {
			this.#state = State.Failed;
			throw error;
		}
	}

	/** Gives the message buffer back to its pool; the parser stays usable. */
	release(): void {
		this.#message.release();
	}

	#needed(): number {
		if (this.#headerLength < 2) return 2;
		const len7 = this.#header[1] & 0x7F;
		return 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (this.#header[1] & 0x80 ? 4 : 0);
	}

	#readHeader(data: Uint8Array, i: number): number {
		while (i < data.length && this.#headerLength < this.#needed()) this.#header[this.#headerLength++] = data[i++];
		if (this.#headerLength < this.#needed()) return i;
		const h = this.#header;
		if (h[0] & 0x70) throw protocol("reserved bits set (no extension was negotiated)");
		if (h[1] & 0x80) throw protocol("a masked frame (servers must not mask)");
		const opcode = h[0] & 0x0F;
		const fin = (h[0] & 0x80) !== 0;
		const len7 = h[1] & 0x7F;
		let length: number;
		if (len7 === 126) {
			length = h[2] * 0x100 + h[3];
			if (length < 126) throw protocol("a length not in its shortest form");
		} else if (len7 === 127) {
			// multiplication, not <<: XS shifts in C, where h[2] << 24 can overflow an int
			const high = h[2] * 0x1000000 + h[3] * 0x10000 + h[4] * 0x100 + h[5];
			const low = h[6] * 0x1000000 + h[7] * 0x10000 + h[8] * 0x100 + h[9];
			if (high >= 0x80000000) throw protocol("a 64-bit length with its top bit set");
			if (high >= 0x200000) throw this.#tooBig(Number.MAX_SAFE_INTEGER);
			length = high * 0x100000000 + low;
			if (length < 0x10000) throw protocol("a length not in its shortest form");
		} else length = len7;
		if (opcode >= 8) {
			if (opcode > Opcode.Pong) throw protocol(`unknown control opcode ${opcode}`);
			if (!fin) throw protocol("a fragmented control frame");
			if (length > 125) throw protocol(`a control frame of ${length} bytes (at most 125)`);
			this.#controlLength = 0;
		} else {
			if (opcode > Opcode.Binary) throw protocol(`unknown data opcode ${opcode}`);
			if (opcode === Opcode.Continuation) {
				if (!this.#messageOpcode) throw protocol("a continuation frame with no message begun");
			} else {
				if (this.#messageOpcode) throw protocol("a new message inside a fragmented one");
				this.#messageOpcode = opcode;
				this.#fragments = 0;
				this.#message.clear();
			}
			if (++this.#fragments > WS_MESSAGE_FRAGMENTS_MAX) {
				throw new WebSocketError("too_large", `the server sent a message in more than ${WS_MESSAGE_FRAGMENTS_MAX} fragments`, 1009);
			}
			const total = this.#message.length + length;
			if (!this.#message.reserve(total)) throw this.#tooBig(total);
		}
		this.#opcode = opcode;
		this.#fin = fin;
		this.#remaining = length;
		this.#headerLength = 0;
		this.#state = State.Payload;
		return i;
	}

	#readPayload(data: Uint8Array, i: number): number {
		const count = Math.min(this.#remaining, data.length - i);
		if (count > 0) {
			const piece = data.subarray(i, i + count);
			if (this.#opcode >= 8) {
				this.#control.set(piece, this.#controlLength);
				this.#controlLength += count;
			} else {
				this.#message.append(piece); // room was reserved at the frame's header
			}
			this.#remaining -= count;
			i += count;
		}
		if (this.#remaining > 0) return i;
		this.#state = State.Header;
		const opcode = this.#opcode;
		if (opcode >= 8) {
			this.#events.onControl(opcode as Opcode.Close, this.#control.subarray(0, this.#controlLength));
		} else if (this.#fin) {
			const messageOpcode = this.#messageOpcode as Opcode.Text | Opcode.Binary;
			const bytes = this.#message.view();
			this.#messageOpcode = 0;
			if (messageOpcode === Opcode.Text && !isValidUtf8(bytes)) {
				throw new WebSocketError("protocol", "the server sent a text message that is not valid UTF-8", 1007);
			}
			const length = bytes.length;
			this.#message.clear();
			try {
				this.#events.onMessage(messageOpcode, bytes);
			} finally {
				if (length > WS_MESSAGE_START_BYTES) this.release(); // keep only a small buffer between messages
			}
		}
		return i;
	}

	#tooBig(length: number): WebSocketError {
		const shown = length >= Number.MAX_SAFE_INTEGER ? "more than 2^53" : String(length);
		return new WebSocketError("too_large", `the server sent a message of ${shown} bytes, over the ${this.#maxMessage}-byte cap`, 1009);
	}
}

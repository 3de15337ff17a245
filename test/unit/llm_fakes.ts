// Fakes for the LLM unit tests: a scripted HttpTransport, an instant clock, an
// in-memory key-value store, and a Config on it. Nothing here touches the network.
import { Config, type KeyValueStore } from "config/store";
import { HttpError, type HttpRequest, type HttpResponse, type HttpTransport } from "net/types";
import type { Clock } from "llm/retry";
import { LlmError } from "llm/types";
import { encodeUtf8 } from "net/utf8";

export type Reply = (request: HttpRequest) => Promise<HttpResponse> | HttpResponse;

export function response(body: string, status = 200): HttpResponse {
	return { status, headers: {}, body, bytesSent: 100, bytesReceived: body.length + 50, reusedConnection: false, firstByteMs: 1, durationMs: 2 };
}

/** A whole JSON reply. */
export function json(value: unknown): Reply {
	return () => response(JSON.stringify(value));
}

/** An HTTP error status, as the transport reports it. */
export function status(code: number, message = "mock failure", retryAfterMs?: number): Reply {
	return () => {
		throw new HttpError("status", `HTTP ${code}: ${message}`, { status: code, retryAfterMs });
	};
}

/** A transport-level failure (connect, dns, tls, protocol, timeout, aborted). */
export function fail(kind: HttpError["kind"], message = `${kind} failure`, details: { timeout?: "connect" | "first_byte" | "total" } = {}): Reply {
	return () => {
		throw new HttpError(kind, message, details);
	};
}

/** A streamed body delivered through onChunk, cut into pieces of `piece` bytes (0: one piece). */
export function stream(text: string, piece = 0): Reply {
	return streamBytes(new Uint8Array(ArrayBuffer.fromString(text)), piece);
}

/** Bytes of strings (as UTF-8) and raw byte runs (which may be invalid UTF-8), one after the other. */
export function bytesOf(...parts: (string | number[])[]): Uint8Array {
	const pieces = parts.map((p) => (typeof p === "string" ? encodeUtf8(p) : new Uint8Array(p)));
	const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const p of pieces) {
		out.set(p, at);
		at += p.length;
	}
	return out;
}

/** A streamed body given as bytes (it may hold invalid UTF-8), through onChunk in pieces of `piece` bytes (0: one piece). */
export function streamBytes(bytes: Uint8Array, piece = 0): Reply {
	return (request) => {
		if (!request.onChunk) throw new Error("fake transport: a streamed reply for a request without onChunk");
		const size = piece || bytes.length || 1;
		try {
			for (let at = 0; at < bytes.length; at += size) request.onChunk(bytes.slice(at, at + size));
		} catch (error) {
			throw new HttpError("protocol", error instanceof Error ? error.message : String(error));
		}
		return response("");
	};
}

/**
 * A streamed body of SSE frames (as sse() writes them), each made, encoded and
 * handed to onChunk as it is sent: a long stream never sits whole in the test's
 * heap. frames may be a generator. stats.bytes counts what was sent.
 */
export function streamFrames(frames: Iterable<unknown>, named = false, stats: { bytes: number } = { bytes: 0 }): Reply {
	return (request) => {
		if (!request.onChunk) throw new Error("fake transport: a streamed reply for a request without onChunk");
		try {
			for (const frame of frames) {
				const bytes = encodeUtf8(sse([frame], named));
				stats.bytes += bytes.length;
				request.onChunk(bytes);
			}
		} catch (error) {
			throw new HttpError("protocol", error instanceof Error ? error.message : String(error));
		}
		return response("");
	};
}

/** A whole body handed over as bytes through onBody, as the HTTP client does (HttpResponse.body stays ""). */
export function wholeBytes(bytes: Uint8Array): Reply {
	return (request) => {
		if (!request.onBody) throw new Error("fake transport: a whole reply for a request without onBody");
		try {
			request.onBody(bytes);
		} catch (error) {
			throw new HttpError("protocol", error instanceof Error ? error.message : String(error));
		}
		return response("");
	};
}

/** Never answers until the request's signal aborts, then fails as the real transport does. */
export function hang(): Reply {
	return (request) => new Promise((_resolve, reject) => {
		request.signal?.addListener(() => reject(new HttpError("aborted", "aborted")));
	});
}

export interface Recorded { request: HttpRequest; body: any }

export class FakeTransport implements HttpTransport {
	replies: Reply[] = [];
	requests: Recorded[] = [];
	closed = false;

	constructor(...replies: Reply[]) {
		this.replies = replies;
	}

	script(...replies: Reply[]): this {
		this.replies.push(...replies);
		return this;
	}

	async request(request: HttpRequest): Promise<HttpResponse> {
		const body = request.body;
		const text = typeof body === "string" ? body
			: body instanceof Uint8Array ? String.fromArrayBuffer(body.slice().buffer)
			: body ? String.fromArrayBuffer(body) : "";
		this.requests.push({ request, body: text ? JSON.parse(text) : undefined });
		const reply = this.replies.shift();
		if (!reply) throw new HttpError("connect", "fake transport: no reply scripted");
		return reply(request);
	}

	close(): void {
		this.closed = true;
	}
}

/** A clock whose sleeps take no time: they advance now() and are recorded. */
export class FakeClock implements Clock {
	monotonic = 1000;
	wall = Date.UTC(2026, 5, 1, 10, 30);
	sleeps: number[] = [];
	/** When set, sleeps wait for the signal instead of returning. */
	hangSleeps = false;

	now(): number { return this.monotonic; }
	wallNow(): number { return this.wall; }
	sleep(ms: number, signal?: { aborted: boolean; addListener(fn: (reason: string) => void): () => void }): Promise<void> {
		this.sleeps.push(ms);
		if (signal?.aborted) return Promise.reject(new LlmError("aborted", "the LLM request was cancelled"));
		if (this.hangSleeps) {
			return new Promise((_resolve, reject) => {
				signal?.addListener(() => reject(new LlmError("aborted", "the LLM request was cancelled")));
			});
		}
		this.monotonic += ms;
		this.wall += ms;
		return Promise.resolve();
	}
}

export class MemoryStore implements KeyValueStore {
	map = new Map<string, ArrayBuffer>();
	writes = 0;
	read(key: string): ArrayBuffer | undefined {
		const v = this.map.get(key);
		return v ? v.slice(0) : undefined;
	}
	write(key: string, value: ArrayBuffer): void {
		this.writes++;
		this.map.set(key, value.slice(0));
	}
	delete(key: string): void {
		this.map.delete(key);
	}
	[Symbol.iterator](): Iterator<string> {
		return [...this.map.keys()][Symbol.iterator]();
	}
}

export function config(values: Record<string, string> = {}): Config {
	const c = new Config(new MemoryStore());
	for (const [name, value] of Object.entries(values)) c.set(name, value);
	return c;
}

export const OPENAI = { "llm.provider": "openai", "llm.api_key": "sk-test-0123456789abcdef", "llm.model": "gpt-test" };
export const ANTHROPIC = { "llm.provider": "anthropic", "llm.api_key": "sk-ant-test-0123456789", "llm.model": "claude-test" };

/** SSE text of data-only frames. */
export function sse(frames: unknown[], named = false): string {
	return frames.map((f) => {
		const data = typeof f === "string" ? f : JSON.stringify(f);
		const type = typeof f === "object" && f && "type" in f ? (f as { type: string }).type : "";
		return (named && type ? `event: ${type}\n` : "") + `data: ${data}\n\n`;
	}).join("");
}

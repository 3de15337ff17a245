// store/sessions: the session manager (SPEC §6) and what the core plugs in:
// persist (core/types Persist), the "history" context provider, the request
// gate for blocked sessions, and which session each channel+chat talks in (the
// map itself, sessions/chats.json, is store/chats).
//
// Files under the storage root: sessions/<id>.dat + <id>.idx (FORMAT.md), a
// sessions/<id>.blocked marker, and sessions/chats.json (store/chats).
// Session files are opened on first use and kept open (SESSIONS_OPEN_MAX, least
// recently used closed first). Everything runs on the caller's thread, which
// is the core's executor: one request at a time, so no locking.
//
// Known limits: a chat mapped to a deleted session gets a new one on its next
// message; the map forgets its oldest entries beyond SESSION_CHATS_MAX.
import { files, type Directory } from "util/io";
import type { AgentRequest, ContextProvider, Persist, PersistBatch, RequestGate } from "core/types";
import { Channel, ProviderFlag } from "core/types";
import type { Message, StoredRef } from "llm/types";
import {
	MESSAGE_MAX_BYTES, SESSION_COMPACT_KEEP_BYTES, SESSION_RECORD_MAX_BYTES, SESSION_FILE_MAX_BYTES, SESSION_HISTORY_MAX_BYTES,
	SESSION_HISTORY_MAX_RECORDS, SESSION_INFLIGHT_REQUESTS_MAX, SESSION_READ_BATCH_RECORDS, SESSIONS_MAX, SESSIONS_OPEN_MAX, SESSIONS_PER_CHAT_MAX,
} from "budgets";
import { imagesOf, placeholder, promptRecord, windowMessages, windowStart, type PromptRecord } from "store/history";
import { capForStorage } from "store/messages";
import { type Log, SESSIONS_DIR, SESSION_ID_PATTERN, SessionFile, type StoredRecord, paths } from "store/session";
import { ChatSessions } from "store/chats";
import { exists } from "util/files";
import { messageOf } from "util/errors";
import { log } from "util/log";
import { KeyedRun } from "util/run";

// A window's messages go onto the prompt in one push (one growth of the array, where a push
// each costs ~900 instructions in XS); at most SESSION_HISTORY_MAX_RECORDS arguments.
const PUSH = Array.prototype.push;
const ID_SUFFIX_TRIES = 36;   // new ids made in the same millisecond get a suffix a..z, 0..9

export interface SessionSummary {
	id: string;
	/** Data file bytes. */
	bytes: number;
	records: number;
	/** Wall-clock ms of the newest record; 0 when empty or unknown. */
	last_activity: number;
	blocked: boolean;
}

export interface SessionsOptions {
	/** The storage root (default: embedded:storage/files); tests pass a wrapper. */
	root?: Directory;
	/** Where recovery and failure lines go (default: trace). Never given secrets. */
	log?: Log;
	/** Wall-clock ms for record times and new ids (default: Date.now). */
	clock?: () => number;
}

/**
 * The sentence the gate answers a blocked session with: the exact commands, on the
 * console and in a chat (a chat's /session commands act on that chat's sessions).
 */
export function blockedGuidance(id: string): string {
	return `this session (${id}) is full: even after compaction it is over ${SESSION_FILE_MAX_BYTES / 1024} KiB. ` +
		`Start a new session with \`session new\` on the console or /session new in a chat, ` +
		`or delete this one with \`session delete ${id}\` on the console or /session delete ${id} in a chat.`;
}

/**
 * The history window of one open session as the prompt last took it: per record
 * index its kind, capped size and placeholder (null: left out when read), so
 * the next request reads only the records appended since. Dropped when the
 * session file is reopened or rewritten (compaction renumbers records).
 */
interface PromptCache {
	file: SessionFile;
	generation: number;
	/** Per record index: the record, or null when it was left out when read (one array: util/run). */
	records: KeyedRun<HistoryRecord | null>;
	/**
	 * The capped message of record index, read again (for a backend without its
	 * wire piece); `held` itself when the caller still holds the message appended.
	 */
	load(index: number, held?: Message): Message;
	/** The last window while the whole session fits it (see #extend), else undefined. */
	whole: WholeWindow | undefined;
}

/**
 * A window over records [0, end) of a session whose records all fit the history
 * budget (SESSION_HISTORY_MAX_BYTES, SESSION_HISTORY_MAX_RECORDS) together: then
 * windowStart never stops for the budget, so the next window over [0, end') is
 * this one with the units of the records appended since (#extend), and neither
 * the walk back nor either pass of the window runs over the old records again.
 */
interface WholeWindow {
	end: number;
	/** Where the window opens (windowStart; end when no unit of it opens with a user message). */
	from: number;
	/** The capped sizes of records [0, end) together (left out ones count 0). */
	bytes: number;
	/** The window's messages (placeholders), oldest first. */
	messages: Message[];
}

/**
 * A record of a prompt cache: what selectWindow needs (kind, capped size, the
 * placeholder) and the placeholder's StoredRef in one object, so a record of a
 * full window costs one object besides its placeholder. load() reads it back;
 * the backends keep its wire piece in their arena for the window (group).
 */
class HistoryRecord implements PromptRecord, StoredRef {
	readonly kind: PromptRecord["kind"];
	readonly bytes: number;
	readonly message: Message;
	// Declared, not defined: most records hold no image, and an own property costs a slot each.
	declare readonly images?: StoredRef["images"];
	/**
	 * The message of a record just appended (the object persisted, whose JSON text
	 * is what the file holds), until its first load(): the backend loads each new
	 * record once (to encode its wire piece), and then needs no read of the file
	 * (two reads and a CRC check) nor a JSON.parse (~20,000 instructions a record in
	 * XS). Declared, as images.
	 */
	declare held?: Message;
	readonly group: PromptCache;
	readonly key: number;
	constructor(cache: PromptCache, index: number, kind: PromptRecord["kind"], message: Message, bytes: number, held?: Message) {
		this.kind = kind;
		this.bytes = bytes;
		// Only a user message with parts can hold images (imagesOf), so the others cost no call.
		const images = message.role === "user" && typeof message.content !== "string" ? imagesOf(message) : undefined;
		if (images) (this as { images?: StoredRef["images"] }).images = images;
		if (held) this.held = held;
		this.group = cache;
		this.key = index;
		this.message = placeholder(message, this);
	}
	load(): Message {
		const held = this.held;
		if (held !== undefined) this.held = undefined;
		return this.group.load(this.key, held);
	}
}

export class Sessions {
	#root: Directory;
	#log: Log;
	#clock: () => number;
	/** Open session files, least recently used first. */
	#open = new Map<string, SessionFile>();
	/** The id #open holds last (the most recently used): using it again moves nothing. */
	#recent = "";
	/** Per session id: the history window the prompt last took (see PromptCache). */
	#prompts = new Map<string, PromptCache>();
	/** Which session each chat talks in, and which chat made each (sessions/chats.json). */
	#chats: ChatSessions;
	/**
	 * Per session: request id -> the index its first USER batch was appended at, for
	 * the requests of the turn in flight (the running one and the interrupts merged
	 * into it, which the core persists under their own request ids). Cleared when a
	 * turn completes; at most SESSION_INFLIGHT_REQUESTS_MAX per session.
	 */
	#inflight = new Map<string, Map<number, number>>();
	/** Per open session: whether its blocked marker exists (dropped with the open file). */
	#blocked = new Map<string, boolean>();

	constructor(options: SessionsOptions = {}) {
		this.#root = options.root ?? files;
		this.#log = options.log ?? log;
		this.#clock = options.clock ?? (() => Date.now());
		this.#root.createDirectory(SESSIONS_DIR);
		this.#chats = new ChatSessions(this.#root, this.#log);
	}

	// ---- ids per channel and chat ----

	#map(channel: string, chat_id: string, id: string): void {
		const left = this.#chats.map(`${channel}:${chat_id}`, id);
		// A session no chat talks in any more lets go of its history window (a few
		// hundred KiB of heap and PSRAM when full); it is read again if a chat comes back.
		if (left) this.#prompts.delete(left);
	}

	/** Sessions whose history window is held in memory (at most SESSIONS_OPEN_MAX; for tests). */
	get windowsHeld(): number {
		return this.#prompts.size;
	}

	/** The session a channel's chat talks in; the first message of a chat creates one. */
	currentSession(channel: string, chat_id: string): string {
		const id = this.#chats.sessionOf(`${channel}:${chat_id}`);
		// An open session's files exist (deleteSession closes it): no lookup on flash for every message.
		if (id && (this.#isOpen(id) || this.has(id))) return id;
		return this.newSession(channel, chat_id);
	}

	/**
	 * A fresh session, made current for the chat. Room is made by the rule for many
	 * chats (issue 25): a chat channel's chat keeps at most SESSIONS_PER_CHAT_MAX
	 * sessions it made, its oldest abandoned one going first; when SESSIONS_MAX
	 * exist, an abandoned chat session goes (this chat's first, then another
	 * chat's). Abandoned: made by a chat of a chat channel, no chat's current one
	 * now, no turn in flight. A session some chat talks in is never removed for
	 * another, nor one the console made; with none to remove the new session is
	 * refused with a sentence.
	 */
	newSession(channel: string, chat_id: string): string {
		const key = `${channel}:${chat_id}`;
		if (channel !== Channel.CONSOLE) this.#keepQuota(key);
		let ids = this.ids();
		if (ids.length >= SESSIONS_MAX && this.#evictAbandoned(ids, key)) ids = this.ids();
		if (ids.length >= SESSIONS_MAX) {
			throw new Error(channel === Channel.CONSOLE
				? `there are already ${SESSIONS_MAX} sessions: delete one with \`session delete <id>\` (see \`session list\`)`
				: `the board keeps at most ${SESSIONS_MAX} conversations and every one is in use: ask the owner to delete one`);
		}
		const base = this.#clock().toString(36);
		let id = base;
		for (let i = 0; i < ID_SUFFIX_TRIES && ids.includes(id); i++) id = `${base}-${i.toString(36)}`;
		if (ids.includes(id)) throw new Error("could not make a new session id: try again in a moment");
		SessionFile.create(this.#root, id);
		this.#chats.made(id, key);
		this.#map(channel, chat_id, id);
		return id;
	}

	/** Sessions no chat talks in, made by a chat of a chat channel (maker given: only its), with no turn in flight; oldest last use first. */
	#abandoned(ids: readonly string[], maker?: string): string[] {
		const current = this.#chats.current();
		const found = ids.filter((id) => {
			const made = this.#chats.makerOf(id);
			if (!made || made.startsWith(`${Channel.CONSOLE}:`) || (maker !== undefined && made !== maker)) return false;
			return !current.has(id) && !this.#inflight.get(id)?.size;
		});
		// A session with no record yet counts from its creation (its id is the clock in base 36).
		const lastUse = (id: string) => this.#summary(id).last_activity || parseInt(id.split("-")[0], 36) || 0;
		return found.map((id) => ({ id, last: lastUse(id) })).sort((a, b) => a.last - b.last).map((e) => e.id);
	}

	/** Before a chat's new session: its abandoned sessions beyond its quota go, oldest first. */
	#keepQuota(key: string): void {
		const ids = this.ids();
		let made = 0;
		for (const id of ids) if (this.#chats.makerOf(id) === key) made++;
		if (made < SESSIONS_PER_CHAT_MAX) return;
		for (const id of this.#abandoned(ids, key)) {
			if (made < SESSIONS_PER_CHAT_MAX) break;
			this.#remove(id, `${key} keeps at most ${SESSIONS_PER_CHAT_MAX} sessions: removed ${id}, its oldest one left`);
			made--;
		}
	}

	/** With every slot taken: one abandoned session goes, the asking chat's own first. False when none qualifies. */
	#evictAbandoned(ids: string[], key: string): boolean {
		const id = this.#abandoned(ids, key)[0] ?? this.#abandoned(ids)[0];
		if (id === undefined) return false;
		this.#remove(id, `${SESSIONS_MAX} sessions exist: removed ${id} (left by ${this.#chats.makerOf(id)}), the oldest abandoned chat session, to make room`);
		return true;
	}

	#remove(id: string, why: string): void {
		this.deleteSession(id);
		this.#log(`store: ${why}`);
	}

	/** Makes an existing session current for the chat. */
	switchSession(channel: string, chat_id: string, id: string): void {
		if (!this.has(id)) throw new Error(`there is no session ${id}: see \`session list\``);
		this.#map(channel, chat_id, id);
	}

	/** Deletes a session's files; chats that talked in it get a new session next time. */
	deleteSession(id: string): void {
		if (!this.has(id)) throw new Error(`there is no session ${id}: see \`session list\``);
		this.#open.get(id)?.close();
		this.#open.delete(id);
		this.#recent = "";
		this.#inflight.delete(id);
		this.#prompts.delete(id);
		this.#blocked.delete(id);
		const p = paths(id);
		// Data last: until it goes, the session still lists and can be deleted again.
		for (const path of [p.blocked, p.index, p.indexTmp, p.dataTmp, p.data]) this.#root.delete(path);
		this.#chats.forget(id);
	}

	has(id: string): boolean {
		return SESSION_ID_PATTERN.test(id) && exists(this.#root, paths(id).data);
	}

	/** Session ids on flash, sorted (ids made from the clock sort by creation). */
	ids(): string[] {
		const ids: string[] = [];
		for (const name of this.#root.scan(SESSIONS_DIR)) {
			if (!name.endsWith(".dat")) continue;
			const id = name.slice(0, -4);
			if (SESSION_ID_PATTERN.test(id)) ids.push(id);
		}
		return ids.sort();
	}

	/**
	 * Size, records and last activity of every session. An open session answers
	 * from memory; a closed one from its index when the index's last entry ends
	 * where the data file ends, else from a read-only scan of the data (what open()
	 * would keep); nothing is repaired until the session is used.
	 */
	list(): SessionSummary[] {
		return this.ids().map((id) => this.#summary(id));
	}

	#summary(id: string): SessionSummary {
		const p = paths(id);
		const blocked = exists(this.#root, p.blocked);
		const open = this.#open.get(id);
		let bytes = 0, records = 0, last = 0;
		try {
			// An open session's appends may wait for their flush: on littlefs the file's status does not count them yet.
			bytes = open && !open.closed ? open.size : this.#root.status(p.data).size;
			if (open) {
				records = open.count;
				last = open.count ? open.readLast(1)[0]?.time ?? 0 : 0;
			} else {
				({ records, last } = SessionFile.peek(this.#root, id));
			}
		} catch (error) {
			this.#log(`store: session ${id}: could not read its summary (${messageOf(error)})`);
		}
		return { id, bytes, records, last_activity: last, blocked };
	}

	/** The newest `max` records of a session, oldest first (for `session show`). */
	show(id: string, max: number): StoredRecord[] {
		if (!this.has(id)) throw new Error(`there is no session ${id}: see \`session list\``);
		return this.#session(id).readLast(max);
	}

	isBlocked(id: string): boolean {
		if (!id) return false;
		// Asked once per request (the gate): the marker is looked up once per session,
		// then known, since only this manager writes it (#compact) and removes it (deleteSession).
		let blocked = this.#blocked.get(id);
		if (blocked === undefined) {
			blocked = exists(this.#root, paths(id).blocked);
			if (this.#open.has(id)) this.#blocked.set(id, blocked);
		}
		return blocked;
	}

	/** Whether the session is open and usable (its files exist: deleteSession closes it first). */
	#isOpen(id: string): boolean {
		const open = this.#open.get(id);
		return !!open && !open.closed && !open.damaged;
	}

	/** The open session file, opening (and repairing) it on first use. */
	#session(id: string): SessionFile {
		let session = this.#open.get(id);
		if (session && !session.closed && !session.damaged) {
			if (this.#recent !== id) {
				this.#open.delete(id);
				this.#open.set(id, session);   // most recently used last
				this.#recent = id;
			}
			return session;
		}
		// A read found a damaged record: this open checks every record and keeps the original aside.
		const verify = !!session?.damaged;
		session?.close();
		if (!this.has(id)) SessionFile.create(this.#root, id);
		session = SessionFile.open(this.#root, id, this.#log, { verify });
		this.#open.delete(id);
		this.#open.set(id, session);
		this.#recent = id;
		for (const [oldId, old] of this.#open) {
			if (this.#open.size <= SESSIONS_OPEN_MAX) break;
			old.close();
			this.#open.delete(oldId);
			this.#prompts.delete(oldId);
			this.#blocked.delete(oldId);
		}
		return session;
	}

	/** Remembers where a request's first USER record went (a later USER batch of the same request does not move it). */
	#noteStart(id: string, request_id: number, from: number): void {
		let starts = this.#inflight.get(id);
		if (!starts) this.#inflight.set(id, starts = new Map());
		if (starts.has(request_id)) return;
		starts.set(request_id, from);
		// Bounded: only turns whose completion was never persisted leave entries behind; the oldest go first
		// (no iterator for the usual one or two entries).
		if (starts.size > SESSION_INFLIGHT_REQUESTS_MAX) for (const oldest of starts.keys()) {
			if (starts.size <= SESSION_INFLIGHT_REQUESTS_MAX) break;
			starts.delete(oldest);
		}
	}

	/** Drops a session whose last operation failed: the next use reopens (and repairs) it. */
	#forget(id: string): void {
		this.#open.get(id)?.close();
		this.#open.delete(id);
		this.#recent = "";
		this.#prompts.delete(id);
		this.#blocked.delete(id);
	}

	// ---- what the core plugs in ----

	/** core/types Persist: appends a batch; compacts after a completed turn over the limit. Never throws. */
	readonly persist: Persist = (batch: PersistBatch) => {
		const id = batch.session_id;
		if (!id || !batch.records.length) return;
		try {
			// An open session's id was checked when it was opened.
			if (!this.#open.has(id) && !SESSION_ID_PATTERN.test(id)) throw new Error("the session id is not a valid session name");
			const session = this.#session(id);
			const request_id = batch.request.request_id;
			if (batch.records[0].kind === "user") this.#noteStart(id, request_id, session.count);
			const time = this.#clock();
			const first = session.count;
			// Flushed (committed) at once: what the user said (SPEC §6: a power loss never loses
			// input) and a turn's last batch. A tool round waits for the next of these (store/session append).
			const lengths = session.appendBatch(batch.records, batch.turn_completed, time, request_id, batch.turn_completed || batch.records[0].kind === "user");
			this.#remember(id, session, batch.records, first, lengths, session.cappedLast === 0);
			if (batch.turn_completed) {
				this.#inflight.delete(id);
				// A request that was bound to the session before its chat moved on (queued, or
				// in flight at /new) read its window again: let it go with the turn, as #map did.
				if (!this.#chats.talkedIn(id)) this.#prompts.delete(id);
			}
			if (!batch.turn_completed || session.size <= SESSION_FILE_MAX_BYTES) return;
		} catch (error) {
			this.#forget(id);
			this.#log(`store: session ${id}: ${batch.records.length} record(s) of request ${batch.request.request_id} were not saved: ${messageOf(error)}`);
			return;
		}
		// The batch is saved; a compaction that fails leaves the old or the new session
		// (rewrite()), is retried after the next completed turn, and says so.
		try {
			this.#compact(this.#session(id));
		} catch (error) {
			this.#forget(id);
			this.#log(`store: session ${id}: the turn was saved, but compacting the session failed (${messageOf(error)}); it is tried again after the next turn`);
		}
	};

	/**
	 * Puts records just appended at [first, ...) into the session's prompt cache, when
	 * it holds one, from the messages in hand: the next request then reads none of them
	 * back. A record's prompt size is its stored JSON's when that fits MESSAGE_MAX_BYTES
	 * (the stored text is JSON.stringify of the message, and capMessage keeps a message
	 * that fits as it is), and the record keeps the message for its first load() when
	 * the file holds it whole (`whole`: no record of the batch was capped for storage);
	 * a larger one is capped and measured as a read would, and loaded from the file.
	 */
	#remember(id: string, session: SessionFile, records: PersistBatch["records"], first: number, lengths: number[], whole: boolean): void {
		const cache = this.#prompts.get(id);
		if (!cache || cache.file !== session || cache.generation !== session.generation) return;
		for (let i = 0; i < records.length; i++) {
			const kind = records[i].kind;
			let message = records[i].message, bytes = lengths[i], held: Message | undefined = whole ? message : undefined;
			if (bytes > MESSAGE_MAX_BYTES) {
				({ message, bytes } = promptRecord({ kind, message: capForStorage(message, SESSION_RECORD_MAX_BYTES), index: first + i, turn_completed: false, time: 0, request_id: 0 }, MESSAGE_MAX_BYTES));
				held = undefined;
			}
			cache.records.set(first + i, new HistoryRecord(cache, first + i, kind, message, bytes, held));
		}
	}

	/** Compacts a session now (persist does it after a completed turn over the limit); returns the data sizes. */
	compact(id: string): { before: number; after: number } {
		if (!this.has(id)) throw new Error(`there is no session ${id}: see \`session list\``);
		return this.#compact(this.#session(id));
	}

	/**
	 * Keeps user messages, final answers and failure notes, and the latest tool
	 * round, of the newest turns whose kept records fit SESSION_COMPACT_KEEP_BYTES
	 * (the newest turn always): older turns go whole, so a session takes any
	 * number of requests (one once filled up with questions and answers alone
	 * after ~1,000 short ones and was blocked).
	 */
	#compact(session: SessionFile): { before: number; after: number } {
		// Kinds and sizes come from the index: compaction never holds the records themselves in memory.
		const kinds = session.kinds();
		const sizes = session.sizes();
		const starts = this.#inflight.get(session.id);
		let round = kinds.length - 1;
		while (round >= 0 && kinds[round] !== "assistant_tool") round--;
		let roundEnd = round;
		if (round >= 0) while (roundEnd + 1 < kinds.length && kinds[roundEnd + 1] === "tool_result") roundEnd++;
		const keeps = (kind: string, i: number) => kind === "user" || kind === "assistant_final" || kind === "failure_note" || (round >= 0 && i >= round && i <= roundEnd);
		// The first record kept: a turn's start (a user message), walking back from the newest
		// while what is kept fits; never past a request still in flight (a manual compaction).
		let limit = kinds.length;
		for (const from of starts?.values() ?? []) limit = Math.min(limit, from);
		let first = 0, bytes = 0, start = -1;
		for (let i = kinds.length - 1; i >= 0; i--) {
			if (keeps(kinds[i], i)) bytes += sizes[i];
			if (kinds[i] !== "user") continue;
			if (start >= 0 && bytes > SESSION_COMPACT_KEEP_BYTES) {
				first = start;   // the turn from i on does not fit: it and the older ones go
				break;
			}
			if (i <= limit) start = i;
		}
		const kept: number[] = [];
		for (let i = first; i < kinds.length; i++) if (keeps(kinds[i], i)) kept.push(i);
		const { before, after } = session.compact(kept);
		// A request still in flight (a manual compaction) keeps excluding exactly its own records.
		for (const [request_id, from] of starts ?? []) starts!.set(request_id, kept.filter((i) => i < from).length);
		const gone = first ? `; ${kept.filter((i) => kinds[i] === "user").length} turns kept, the ${kinds.slice(0, first).filter((k) => k === "user").length} older ones gone` : "";
		this.#log(`store: session ${session.id}: compacted from ${before} to ${after} bytes (${kinds.length} -> ${kept.length} records${gone})`);
		if (after > SESSION_FILE_MAX_BYTES) {
			session.block(blockedGuidance(session.id));
			this.#blocked.set(session.id, true);
			this.#log(`store: session ${session.id}: still ${after} bytes after compaction, over ${SESSION_FILE_MAX_BYTES}: blocked; new requests are told to start a new session`);
		}
		return { before, after };
	}

	/** core/types RequestGate: refuses requests to a blocked session with guidance. Never throws. */
	readonly gate: RequestGate = (request: AgentRequest) => {
		try {
			return this.isBlocked(request.session_id) ? blockedGuidance(request.session_id) : undefined;
		} catch (error) {
			this.#log(`store: the session gate could not check ${request.session_id}: ${messageOf(error)}`);
			return undefined;
		}
	};

	/**
	 * The newest history before the request in flight, within SESSION_HISTORY_MAX_BYTES,
	 * oldest first. Reads back in steps of SESSION_READ_BATCH_RECORDS through the index.
	 */
	history(request: AgentRequest): Message[] {
		return this.#window(request).map((m) => (m.stored ? m.stored.load() : m));
	}

	/**
	 * The history window as placeholders (llm/types StoredRef): what the history
	 * provider gives the core, so the heap holds no copy of the history. Records
	 * already in the last window come from the prompt cache; only newer ones are
	 * read (in steps of SESSION_READ_BATCH_RECORDS), capped and measured once.
	 * Pushed onto out (the core's prompt, for the history provider).
	 */
	#window(request: AgentRequest, out: Message[] = []): Message[] {
		const id = request.session_id;
		if (!id) return out;
		// An open session's files exist (deleteSession closes it): no lookup on flash.
		if (!this.#isOpen(id) && !this.has(id)) return out;
		const session = this.#session(id);
		const cache = this.#promptCache(id, session);
		const end = this.#inflight.get(id)?.get(request.request_id) ?? session.count;
		const whole = cache.whole;
		if (whole && this.#extend(cache, whole, end)) {
			PUSH.apply(out, whole.messages);
			return out;
		}
		cache.whole = undefined;
		let bytes = 0;
		let start = end;
		let view = cache.records.view();
		// Bounded by SESSION_HISTORY_MAX_RECORDS and the budget (capped sizes; raw sizes would stop too early).
		while (start > 0 && end - start < SESSION_HISTORY_MAX_RECORDS && bytes <= SESSION_HISTORY_MAX_BYTES) {
			const from = Math.max(0, start - SESSION_READ_BATCH_RECORDS, end - SESSION_HISTORY_MAX_RECORDS);
			if (!cache.records.covers(from, start)) {
				this.#readPrompt(session, cache, from, start);
				view = cache.records.view();
			}
			// The records read inline (the view), not through a call each: see store/history RecordsView.
			const { items, offset, mask } = view;
			for (let i = from; i < start; i++) {
				const record = items[(offset + i) & mask];
				if (record) bytes += record.bytes;
			}
			start = from;
		}
		cache.records.dropBelow(start);
		view = cache.records.view();
		const from = windowStart(view, start, end, SESSION_HISTORY_MAX_BYTES);
		if (start > 0 || bytes > SESSION_HISTORY_MAX_BYTES || end > SESSION_HISTORY_MAX_RECORDS) {
			windowMessages(view, from, end, out);
			return out;
		}
		// The whole session fits: kept, so the next request extends it (#extend).
		const messages: Message[] = [];
		windowMessages(view, from, end, messages);
		cache.whole = { end, from, bytes, messages };
		PUSH.apply(out, messages);
		return out;
	}

	/**
	 * Brings the cache's whole-session window up to end when that gives what the
	 * full walk (#window) would: every record of [whole.end, end) is in the cache,
	 * all of [0, end) still fit the budget together (so windowStart stops for no
	 * unit and the walk back reaches record 0), and the first of the new records is
	 * no tool result (so no unit spans whole.end: the units below it, the window's
	 * opening among them and its messages are the old ones). Costs O(end - whole.end).
	 * False (nothing changed) when any of this does not hold: the caller walks.
	 */
	#extend(cache: PromptCache, whole: WholeWindow, end: number): boolean {
		const old = whole.end;
		if (end === old) return true;
		if (end < old || end > SESSION_HISTORY_MAX_RECORDS || !cache.records.covers(old, end)) return false;
		const view = cache.records.view();
		const { items, offset, mask } = view;
		let bytes = whole.bytes, first: PromptRecord | null | undefined = null;
		for (let i = old; i < end; i++) {
			const record = items[(offset + i) & mask];
			if (!record) continue;
			bytes += record.bytes;
			if (!first) first = record;
		}
		if (bytes > SESSION_HISTORY_MAX_BYTES || (first && first.kind === "tool_result")) return false;
		// No user message opened a unit before old: the window opens among the new records, if at all.
		const from = whole.from === old ? windowStart(view, old, end, SESSION_HISTORY_MAX_BYTES) : whole.from;
		windowMessages(view, from === whole.from ? old : from, end, whole.messages);
		whole.end = end;
		whole.from = from;
		whole.bytes = bytes;
		return true;
	}

	#promptCache(id: string, file: SessionFile): PromptCache {
		const known = this.#prompts.get(id);
		if (known && known.file === file && known.generation === file.generation) return known;
		const generation = file.generation;
		const records = new KeyedRun<HistoryRecord | null>();
		const cache: PromptCache = {
			file, generation, records, whole: undefined,
			load: (index, held) => {
				const now = this.#session(id);
				if (now.generation !== generation) throw new Error(`session ${id} was rewritten since its history was read`);
				// The message a record kept from its append is what the file holds (its JSON, which fits the cap, uncapped).
				if (held) return held;
				const message = now.message(index, MESSAGE_MAX_BYTES);
				if (!message) throw new Error(`record ${index} of session ${id} cannot be read`);
				return message;
			},
		};
		this.#prompts.set(id, cache);
		return cache;
	}

	/** Puts records [from, to) that the cache lacks into it: read, capped and measured once (null: left out when read). */
	#readPrompt(session: SessionFile, cache: PromptCache, from: number, to: number): void {
		// Each pass consumes at least one index: bounded by to - from.
		for (let i = from; i < to;) {
			if (cache.records.has(i)) {
				i++;
				continue;
			}
			let j = i;
			while (j < to && !cache.records.has(j)) j++;
			for (let k = i; k < j; k++) cache.records.set(k, null);
			// Capped and measured as soon as read, so a long tool result is not held whole while walking back.
			const read = session.read(i, j);
			for (let k = 0; k < read.length; k++) {
				const prompt = promptRecord(read[k], MESSAGE_MAX_BYTES);
				cache.records.set(read[k].index, new HistoryRecord(cache, read[k].index, prompt.kind, prompt.message, prompt.bytes));
			}
			i = j;
		}
	}

	/**
	 * The "history" context provider (REQUEST_START_ONLY): undefined when there is
	 * nothing yet. Pushes onto the core's prompt when it offers it (no array of its own).
	 */
	readonly historyProvider: ContextProvider = {
		name: "history",
		flags: ProviderFlag.REQUEST_START_ONLY,
		collect: (request: AgentRequest, prompt?: Message[]) => {
			const from = prompt ? prompt.length : 0;
			const messages = this.#window(request, prompt);
			return messages.length > from ? { kind: "messages", content: messages } : undefined;
		},
	};

	/**
	 * Writes and flushes what waits in memory in every open session (a turn's tool
	 * rounds, index entries), as close does, keeping them open: for a reader of the
	 * files beside this manager (tests). A session whose storage fails is logged and reopened on its next use.
	 */
	sync(): void {
		for (const [id, session] of this.#open) {
			try {
				session.sync();
			} catch (error) {
				this.#forget(id);
				this.#log(`store: session ${id}: could not commit what waited (${messageOf(error)})`);
			}
		}
	}

	/** Closes every open session file (tests, reboot). */
	close(): void {
		for (const session of this.#open.values()) session.close();
		this.#open.clear();
		this.#recent = "";
		this.#prompts.clear();
		this.#blocked.clear();
	}
}

/** Sets the session store up on the storage root: see NOTES.md for wiring it into main.ts. */
export function openSessions(options: SessionsOptions = {}): Sessions {
	return new Sessions(options);
}

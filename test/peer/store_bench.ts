// The XS side of tools/bench/store.mjs: times the session store on the host's
// files and traces one `BENCH {"name", "ms"}` line per sample.
//   --appends N   store.append_ms samples (one ~300-byte record, appended as a turn's last batch: flushed)
//   --turns N     store.turn_ms samples (a tool turn: question, tool round, answer; one data flush)
//   --reads N     store.read_last24_ms_10k / _150k samples
//   --compacts N  store.compact_150k_ms samples (a fresh 150 KiB session each)
//   --opens N     store.open_150k_ms samples (SessionFile.open of a clean 150 KiB session, through its index)
import { exit, now, option } from "host/platform";
import type { AgentRequest, ContextRecord } from "core/types";
import { SESSION_FILE_MAX_BYTES } from "budgets";
import files from "embedded:storage/files";
import { Sessions } from "store/sessions";
import { SessionFile } from "store/session";

const count = (name: string, fallback: number) => Number(option(name) ?? fallback);
const report = (name: string, ms: number) => trace(`BENCH ${JSON.stringify({ name, ms })}\n`);
let clock = 1_700_000_000_000;
const sessions = new Sessions({ clock: () => clock++, log: () => {} });
const request = (session_id: string, request_id: number): AgentRequest => ({ request_id, flags: 0, session_id, user_text: "", source: { channel: "bench", chat_id: "", sender_id: "", message_id: "", cap: "" } });
const text = (n: number) => "bench text ".repeat(Math.ceil(n / 11)).slice(0, n);
const user = (n: number): ContextRecord => ({ kind: "user", message: { role: "user", content: text(n) } });

/** Fills a session with turns of a question, a tool round of two results and an answer, up to bytes. */
function fill(id: string, bytes: number, resultBytes: number): void {
	let size = 0;
	for (let t = 1; size < bytes; t++) {
		const r = request(id, t);
		sessions.persist({ session_id: id, request: r, records: [user(200)], turn_completed: false });
		sessions.persist({
			session_id: id, request: r, turn_completed: false, records: [
				{ kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: [{ id: `a${t}`, type: "function", function: { name: "probe", arguments: "{}" } }, { id: `b${t}`, type: "function", function: { name: "probe", arguments: "{}" } }] } },
				{ kind: "tool_result", message: { role: "tool", tool_call_id: `a${t}`, content: text(resultBytes) } },
				{ kind: "tool_result", message: { role: "tool", tool_call_id: `b${t}`, content: text(resultBytes) } },
			],
		});
		// Not turn_completed: the bench decides when compaction runs.
		sessions.persist({ session_id: id, request: r, records: [{ kind: "assistant_final", message: { role: "assistant", content: text(300) } }], turn_completed: false });
		size = sessions.list().find((s) => s.id === id)!.bytes;
	}
}

const appendSession = sessions.newSession("bench", "append");
for (let i = 0; i < count("appends", 50); i++) {
	const start = now();
	// A turn's last batch: it commits (flushes) the data.
	sessions.persist({ session_id: appendSession, request: request(appendSession, i + 1), records: [user(300)], turn_completed: true });
	report("store.append_ms", now() - start);
}

// A whole tool turn as the core persists it: question, one tool round, answer (committed once).
const turnSession = sessions.newSession("bench", "turn");
for (let t = 1; t <= count("turns", 50); t++) {
	const r = request(turnSession, t);
	const start = now();
	sessions.persist({ session_id: turnSession, request: r, records: [user(200)], turn_completed: false });
	sessions.persist({
		session_id: turnSession, request: r, turn_completed: false, records: [
			{ kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: [{ id: `c${t}`, type: "function", function: { name: "get_time", arguments: "{\"timezone\":\"UTC\"}" } }] } },
			{ kind: "tool_result", message: { role: "tool", tool_call_id: `c${t}`, content: text(1000) } },
		],
	});
	sessions.persist({ session_id: turnSession, request: r, records: [{ kind: "assistant_final", message: { role: "assistant", content: text(300) } }], turn_completed: true });
	report("store.turn_ms", now() - start);
}

for (const [name, bytes] of [["store.read_last24_ms_10k", 10 * 1024], ["store.read_last24_ms_150k", SESSION_FILE_MAX_BYTES]] as const) {
	const id = sessions.newSession("bench", name);
	fill(id, bytes, 300);   // the same record sizes in both, so only the file size differs
	for (let i = 0; i < count("reads", 30); i++) {
		const start = now();
		const records = sessions.show(id, 24);
		report(name, now() - start);
		if (records.length !== 24) throw new Error(`read ${records.length} records, not 24`);
	}
	if (bytes === SESSION_FILE_MAX_BYTES) {
		// What a session's first use per boot costs: open() through the index that proves the data file.
		for (let i = 0; i < count("opens", 10); i++) {
			const start = now();
			const session = SessionFile.open(files, id, () => {});
			report("store.open_150k_ms", now() - start);
			session.close();
		}
	}
	sessions.deleteSession(id);
}

for (let i = 0; i < count("compacts", 5); i++) {
	const id = sessions.newSession("bench", `compact${i}`);
	fill(id, SESSION_FILE_MAX_BYTES, 3000);
	const start = now();
	const { before, after } = sessions.compact(id);
	report("store.compact_150k_ms", now() - start);
	if (after >= before) throw new Error("compaction did not shrink the session");
	sessions.deleteSession(id);
}
exit(0);

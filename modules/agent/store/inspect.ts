// store/inspect: the session inspector, run as the host's main module by
// tools/session-inspect.mjs on a copy of a board's storage:
//   xsclaw --modules build/lin/app.map --main store/inspect --data DIR [--session ID] [--records N]
// For each session (or the one named) it checks the files as open() would and
// prints what open() would repair, then the records (newest N, default all up to
// SESSION_INSPECT_RECORDS_DEFAULT). It only reads: nothing in DIR changes.
// Exit code: 0 all clean, 1 findings, 2 no such session or no sessions/ at all.
import { files, type Directory } from "util/io";
import { exit, option } from "host/platform";
import { describeRecord } from "store/console";
import { FLAG_TURN_COMPLETED, DATA_MAGIC, ENTRY_BYTES, FRAME_HEADER_BYTES, HEADER_BYTES, decodeEntry, decodeHeader, indexDisagreement, kindName, readIndexFor, scanData, type Scan } from "store/format";
import { SESSIONS_DIR, paths, type StoredRecord } from "store/session";
import { exists, readWhole } from "util/files";
import { SESSION_CHATS_FILE_MAX_BYTES, SESSION_INSPECT_RECORDS_DEFAULT } from "budgets";
import type { Message } from "llm/types";

const print = (line: string) => trace(`${line}\n`);

/** The part of an index file that can agree with scan (never the whole of a huge one), and its size. */
function readIndex(root: Directory, path: string, scan: Scan): { bytes: Uint8Array; size: number } {
	const file = root.openFile({ path, mode: "r" });
	try {
		return readIndexFor(file, scan);
	} finally {
		file.close();
	}
}

/** Checks one session read-only; prints findings and records; returns the number of findings. */
function inspect(root: Directory, id: string, maxRecords: number): number {
	const p = paths(id);
	const findings: string[] = [];
	if (exists(root, p.dataTmp)) findings.push(exists(root, p.data) ? "a temporary data file of a cut rewrite is there (open() removes it)" : "only the temporary data file of a rewrite is there (open() renames it into place)");
	if (exists(root, p.indexTmp)) findings.push("a temporary index file is there (open() removes it)");
	const dataPath = exists(root, p.data) ? p.data : p.dataTmp;
	if (!exists(root, dataPath)) {
		print(`session ${id}: no data file`);
		return 1;
	}
	const data = root.openFile({ path: dataPath, mode: "r" });
	try {
		const size = data.status().size;
		const header = decodeHeader(new Uint8Array(data.read(Math.min(HEADER_BYTES, size), 0)), DATA_MAGIC);
		if ("problem" in header) {
			print(`session ${id}: ${size} bytes; the data file cannot be read (${header.problem}): open() keeps it as .bad and starts the session empty`);
			return findings.length + 1;
		}
		const scan = scanData(data, size, header.generation);
		for (const hole of scan.holes) findings.push(`${hole.bytes} damaged bytes at offset ${hole.at}, intact records after them (open() keeps the file as .bad and rewrites the intact records)`);
		if (scan.tail.kind === "torn") findings.push(`a record torn by a power loss: ${scan.tail.bytes} bytes at offset ${scan.tail.at} (open() cuts them)`);
		if (scan.tail.kind === "garbage") findings.push(`${scan.tail.bytes} bytes at offset ${scan.tail.at} are no record (open() keeps the file as .bad and cuts them)`);
		const index = exists(root, p.index) ? readIndex(root, p.index, scan) : undefined;
		const why = indexDisagreement(index?.bytes, scan, index?.size);
		if (why) findings.push(`${why} (open() rebuilds the index)`);
		const blocked = exists(root, p.blocked);
		print(`session ${id}: ${size} bytes, ${scan.count} intact records, generation ${scan.generation}${blocked ? ", blocked (full)" : ""}`);
		for (const finding of findings) print(`  finding: ${finding}`);
		if (!findings.length) print("  files are consistent");
		const first = Math.max(0, scan.count - maxRecords);
		for (let i = first; i < scan.count; i++) {
			const entry = decodeEntry(scan.entries, i * ENTRY_BYTES);
			const frame = new Uint8Array(data.read(FRAME_HEADER_BYTES + entry.length, entry.offset));
			const view = new DataView(frame.buffer);
			let message: Message;
			try {
				message = JSON.parse(String.fromArrayBuffer(frame.buffer.slice(FRAME_HEADER_BYTES) as ArrayBuffer)) as Message;
			} catch {
				print(`  #${i} (its text is not JSON)`);
				continue;
			}
			const record: StoredRecord = {
				index: i, kind: kindName(entry.kind)!, message, turn_completed: !!(entry.flags & FLAG_TURN_COMPLETED),
				time: view.getFloat64(12, true), request_id: view.getUint32(8, true),
			};
			print(`  ${describeRecord(record)}`);
		}
		return findings.length;
	} finally {
		data.close();
	}
}

function main(): number {
	const only = option("session");
	const maxRecords = Math.max(0, Number(option("records") ?? SESSION_INSPECT_RECORDS_DEFAULT) || 0);
	if (!exists(files, SESSIONS_DIR)) {
		print(`no ${SESSIONS_DIR}/ directory in this storage: is --data the directory that holds files/?`);
		return 2;
	}
	const ids = new Set<string>();
	for (const name of files.scan(SESSIONS_DIR)) {
		const m = /^([a-z0-9][a-z0-9-]*)\.(dat|idx|dat\.tmp)$/.exec(name);
		if (m) ids.add(m[1]);
	}
	if (only && !ids.has(only)) {
		print(`no session ${only}; sessions here: ${[...ids].sort().join(", ") || "none"}`);
		return 2;
	}
	let findings = 0;
	for (const id of only ? [only] : [...ids].sort()) findings += inspect(files, id, maxRecords);
	const chats = readWhole(files, `${SESSIONS_DIR}/chats.json`, SESSION_CHATS_FILE_MAX_BYTES);
	if (chats.kind === "ok") print(`chats: ${String.fromArrayBuffer(chats.bytes)}`);
	else if (chats.kind === "too_big") print(`chats: ${chats.size} bytes, more than the ${SESSION_CHATS_FILE_MAX_BYTES} the firmware reads (it keeps the file aside as .bad and chats start new sessions)`);
	print(findings ? `${findings} finding(s): the firmware repairs them when it opens the session` : "no findings");
	return findings ? 1 : 0;
}

exit(main());

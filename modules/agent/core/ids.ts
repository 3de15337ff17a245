// core/ids: request ids that stay unique across reboots, so a session's records
// (`session show`) never list r1, r2, r1, r2. The key-value store keeps the next
// free block of REQUEST_ID_BLOCK ids; each boot takes that block and writes the
// one after it before giving out an id, and takes another when one runs out. So
// ids only grow (a reboot skips what is left of its block), at the cost of one
// small write per boot and per REQUEST_ID_BLOCK requests.
//
// Known limit: without a working store (a damaged namespace) ids start at 1
// again, as before, with a warning.
import { REQUEST_ID_BLOCK, REQUEST_ID_MAX } from "budgets";
import { messageOf } from "util/errors";

/** The part of an `embedded:storage/key-value` store the ids need. */
export interface IdStore {
	read(key: string): ArrayBuffer | string | undefined;
	write(key: string, value: ArrayBuffer): void;
}

const KEY = "next_block";

/** Returns the id source for a core (never 0, never repeated while the store works). */
export function requestIds(store: IdStore | undefined, log: (line: string) => void): () => number {
	let next = 0, end = 0;
	const reserve = (): void => {
		if (!store) throw new Error("no key-value store");
		const stored = store.read(KEY);
		const text = stored instanceof ArrayBuffer ? String.fromArrayBuffer(stored) : typeof stored === "string" ? stored : "0";
		const block = /^\d{1,9}$/.test(text) ? Number(text) : 0;
		const first = Math.max(1, block * REQUEST_ID_BLOCK);
		if (first + REQUEST_ID_BLOCK > REQUEST_ID_MAX) throw new Error("the request ids are used up");
		store.write(KEY, ArrayBuffer.fromString(String(block + 1)));
		next = first;
		end = (block + 1) * REQUEST_ID_BLOCK;
	};
	let failed = false;
	return () => {
		if (next >= end && !failed) {
			try {
				reserve();
			} catch (error) {
				failed = true;
				log(`core: request ids cannot be kept across restarts (${messageOf(error)}); they start at 1 again after each restart`);
				next = Math.max(next, 1);
				end = REQUEST_ID_MAX;
			}
		}
		return next++;
	};
}

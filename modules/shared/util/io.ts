// util/io: the one adapter between modules/ and the ECMA-419 storage modules of
// whichever target is being built. The device build type-checks against the
// Moddable SDK's declarations, the lin build against ours (typings/lin/); where
// the two differ this file bridges them, so nothing else in modules/ casts:
// - embedded:storage/files: its types; the root Directory itself comes from
//   host/files (on the board the SDK's files.js behind the mount guard,
//   hosts/esp32/files.ts; on lin hosts/lin/modules/files.ts);
// - embedded:storage/key-value: the SDK's read() may return number or bigint
//   (numeric formats, which we never open); ours returns ArrayBuffer | string.
// The sockets' adapter is net/sockets.
// Only this module imports the embedded:storage specifiers, host/files and host/storage.
import root from "host/files";
import type { Directory as DirectoryType, File as FileType } from "embedded:storage/files";
import keyValue from "embedded:storage/key-value";
import { check, erase } from "host/storage";

export type Directory = DirectoryType;
export type File = FileType;

/**
 * The storage as this boot found it (host/storage, issue 26): refused holds why
 * it could not be mounted; then nothing on it was written (the SDK's littlefs
 * would have formatted it), every call on files throws with that reason, and
 * only eraseStorage (factory-reset confirm) changes it.
 */
export interface StorageState {
	refused?: string;
}
const verdict = check();
export const storage: StorageState = verdict === "ok" || verdict === "blank" ? {} : { refused: verdict };

/** Erases a storage that could not be mounted, so that the next boot formats it. */
export function eraseStorage(): void { erase(); }

// A root that refuses every call: the firmware runs without storage, each part
// saying what it cannot do and why, rather than a format erasing it all.
function refusedRoot(reason: string): Directory {
	const refuse = (): never => { throw new Error(`the storage is not mounted: ${reason}`); };
	return Object.freeze({
		openFile: refuse, openDirectory: refuse, delete: refuse, move: refuse, status: refuse,
		createDirectory: refuse, scan: refuse, close: refuse, [Symbol.iterator]: refuse,
	}) as unknown as Directory;
}

/** The root of the storage: littlefs's "storage" partition, or <data>/files on lin. */
export const files: Directory = storage.refused !== undefined
	? refusedRoot(storage.refused)
	: root as unknown as Directory;

/** A key-value namespace holding bytes (format "buffer"). */
export interface KeyValueStore {
	/** The stored bytes (a string only if someone else wrote one), or undefined when absent. */
	read(key: string): ArrayBuffer | string | undefined;
	write(key: string, value: ArrayBuffer): void;
	delete(key: string): void;
	[Symbol.iterator](): Iterator<string>;
	close(): void;
}

/** Opens a namespace (NVS on the device). Throws as the store does. */
export function openKeyValue(path: string, mode: "r" | "r+" = "r+"): KeyValueStore {
	const store = keyValue.open({ path, mode });
	return {
		read(key) {
			const value: unknown = store.read(key);
			if (value === undefined || typeof value === "string" || value instanceof ArrayBuffer) return value;
			throw new TypeError(`the entry ${key} holds a ${typeof value}, not bytes`);
		},
		write: (key, value) => store.write(key, value),
		delete: (key) => store.delete(key),
		[Symbol.iterator]: () => store[Symbol.iterator](),
		close: () => store.close(),
	};
}

// util/io: the one adapter between modules/ and the ECMA-419 storage modules of
// whichever target is being built. The device build type-checks against the
// Moddable SDK's declarations, the lin build against ours (typings/lin/); where
// the two differ this file bridges them, so nothing else in modules/ casts:
// - embedded:storage/files: the SDK declares no default export (files.js has
//   one, the root Directory);
// - embedded:storage/key-value: the SDK's read() may return number or bigint
//   (numeric formats, which we never open); ours returns ArrayBuffer | string.
// The sockets' adapter is net/sockets.
// Only this module imports the embedded:storage specifiers.
import * as filesModule from "embedded:storage/files";
import type { Directory as DirectoryType, File as FileType } from "embedded:storage/files";
import keyValue from "embedded:storage/key-value";

export type Directory = DirectoryType;
export type File = FileType;

/** The root of the storage: littlefs's "storage" partition, or <data>/files on lin. */
export const files: Directory = (filesModule as unknown as { default: Directory }).default;

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

// Storage specifiers that @moddable/typings lacks, in the shape of the Moddable
// SDK's ECMA-419 modules (modules/io/files, modules/io/storage). The lin host
// implements them in hosts/lin/src/files.c and keyvalue.c; test/unit/files.test.ts
// and keyvalue.test.ts check these declarations against what the C returns.

declare module "embedded:storage/files" {
	/** "r" read (default, must exist); "r+" read/write (must exist);
	 *  "w" write, "w+" read/write: created if missing, emptied if present. */
	export type FileMode = "r" | "r+" | "w" | "w+";
	export type Bytes = ArrayBuffer | SharedArrayBuffer | ArrayBufferView;

	export interface Status {
		/** Bytes in a file. */
		size: number;
		/** The platform's file mode bits (POSIX st_mode on lin, littlefs type on the device): use the methods. */
		mode: number;
		isFile(): boolean;
		isDirectory(): boolean;
		isSymbolicLink(): boolean;
	}

	export interface File {
		/** Reads up to count bytes at position; shorter at the end of the file. */
		read(count: number, position: number): ArrayBuffer;
		/** Reads into buffer at position; returns the bytes read. */
		read(buffer: Bytes, position: number): number;
		/** Writes all of buffer at position; past the end extends the file (zero-filled). */
		write(buffer: Bytes, position: number): void;
		status(): Status;
		/** Grows (zero-filled) or shrinks the file. */
		setSize(size: number): void;
		/** Makes what was written durable (fsync). */
		flush(): void;
		/** Idempotent; any other method after close throws "closed". */
		close(): void;
	}

	/** Paths are relative to the directory, "/"-separated; absolute paths and ".." are refused. */
	export interface Directory extends Iterable<string> {
		openFile(options: { path: string; mode?: FileMode }): File;
		openDirectory(options: { path: string }): Directory;
		/** Deletes a file or an empty directory; false when nothing was there. */
		delete(path: string): boolean;
		/** Atomic rename; replaces an existing file at `to`. `to` is relative to target (default: this). */
		move(from: string, to: string, target?: Directory): void;
		status(path: string): Status;
		/** false when it already exists. */
		createDirectory(path: string): boolean;
		/** Names (not paths) in this directory or in path below it, sorted: a snapshot. */
		scan(path?: string): IterableIterator<string>;
		/** The root directory refuses (it is shared); others are idempotent. */
		close(): void;
	}

	const files: Directory;
	export default files;
}

declare module "embedded:storage/key-value" {
	/** How values are read and written: "buffer" (default) as ArrayBuffer, "string" as string.
	 *  A value is read back only in the format it was written in (a mismatch throws TypeError), as NVS does. */
	export type KeyValueFormat = "buffer" | "string";
	export type Bytes = ArrayBuffer | SharedArrayBuffer | ArrayBufferView;

	export interface KeyValueOptions {
		/** The namespace: 1-15 characters (letters, digits, "_", "-", "."), as NVS allows 15. */
		path: string;
		/** "r" read-only (the namespace must exist) or "r+" (default) read/write. */
		mode?: "r" | "r+";
		format?: KeyValueFormat;
	}

	/** Keys are 1-15 bytes; values at most 4000 bytes (strings 3999 UTF-8 bytes plus NVS's NUL);
	 *  a namespace holds at most 24576 bytes, the default ESP32 nvs partition. Iterating yields the keys. */
	export interface KeyValueStore extends Iterable<string> {
		format: KeyValueFormat;
		/** undefined when the key is missing. */
		read(key: string): ArrayBuffer | string | undefined;
		/** Reads into buffer (format "buffer"); returns the value's length, undefined when missing. */
		read(key: string, buffer: Bytes): number | undefined;
		/** Commits at once, crash-safely: after a power loss the key holds the old or the new value. */
		write(key: string, value: Bytes | string): void;
		/** Nothing happens when the key is missing. */
		delete(key: string): void;
		/** Idempotent; any other method after close throws "closed". */
		close(): void;
	}

	export interface KeyValue {
		open(options: KeyValueOptions): KeyValueStore;
	}

	const keyValue: KeyValue;
	export default keyValue;
}

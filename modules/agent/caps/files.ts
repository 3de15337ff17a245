// caps/files: the agent's own folder on flash ("workspace" under the storage root;
// on lin <data>/files/workspace/), with file_list, file_read, file_write and
// file_delete. The folder is flat: a name is one path segment of letters, digits,
// ".", "_" and "-" that does not start with "."; anything else ("../x",
// "/etc/passwd", "a/b") is refused before the storage sees it, so no path
// escapes. Sizes are bounded: a file at most FILES_FILE_MAX_BYTES, the folder at
// most FILES_MAX_COUNT files and FILES_TOTAL_MAX_BYTES; a read returns at most
// FILES_READ_MAX_BYTES from an offset. Writes replace the file atomically
// (util/files: temp, flush, rename), so a power loss leaves the old or the new.
// Writing and deleting are restricted (owner only); listing and reading are not.
import type { Directory } from "util/io";
import { FILES_FILE_MAX_BYTES, FILES_MAX_COUNT, FILES_READ_MAX_BYTES, FILES_TOTAL_MAX_BYTES } from "budgets";
import type { Capability } from "caps/types";
import { BAD_SUFFIX, TEMP_SUFFIX, byteLength, decodeText, exists, readWhole, utf8, writeAtomically } from "util/files";

export const WORKSPACE_DIRECTORY = "workspace";
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/** Throws a sentence when name is not a plain file name inside the folder. */
export function checkName(name: string): void {
	if (name.includes("/") || name.includes("\\") || name.includes("..") || name.startsWith("."))
		throw new Error(`"${name}" is outside the agent's folder: use a plain file name like notes.txt (no folders, no "..")`);
	if (!NAME.test(name) || name.endsWith(TEMP_SUFFIX) || name.includes(BAD_SUFFIX))
		throw new Error(`"${name}" is not a file name the folder takes: use up to 64 letters, digits, ".", "_" and "-"`);
}

export class Workspace {
	readonly directory: Directory;

	constructor(directory: Directory) {
		this.directory = directory;
	}

	/** [name, size] of every file, sorted by name. */
	list(): Array<[string, number]> {
		const out: Array<[string, number]> = [];
		for (const name of this.directory.scan()) {
			if (out.length >= FILES_MAX_COUNT * 2) break; // leftovers (.tmp) count too; the bound keeps the scan short
			if (name.endsWith(TEMP_SUFFIX)) continue;
			const status = this.directory.status(name);
			if (status.isFile()) out.push([name, status.size]);
		}
		return out;
	}

	read(name: string, offset = 0): { text: string; size: number; end: number } {
		checkName(name);
		const read = readWhole(this.directory, name, FILES_FILE_MAX_BYTES);
		if (read.kind === "missing") throw new Error(`there is no file ${name}; file_list shows the files`);
		if (read.kind === "too_big") throw new Error(`${name} has ${read.size} bytes, more than the ${FILES_FILE_MAX_BYTES} the agent reads`);
		const size = read.bytes.byteLength;
		if (offset > size) throw new Error(`${name} has ${size} bytes; offset ${offset} is past its end`);
		let end = Math.min(size, offset + FILES_READ_MAX_BYTES);
		const bytes = new Uint8Array(read.bytes);
		// Never cut a UTF-8 sequence: back up to the start of a character.
		while (end < size && end > offset && (bytes[end] & 0xC0) === 0x80) end--;
		const text = decodeText(read.bytes.slice(offset, end));
		if (text === undefined) throw new Error(`${name} is not text (${size} bytes of binary data); it can be inspected if it is an image`);
		return { text, size, end };
	}

	write(name: string, text: string, append: boolean): number {
		checkName(name);
		const old = append ? this.#existing(name) : "";
		const content = old + text;
		const bytes = byteLength(content);
		if (bytes > FILES_FILE_MAX_BYTES) throw new Error(`${name} would have ${bytes} bytes, more than ${FILES_FILE_MAX_BYTES}; write less or split it into files`);
		const files = this.list();
		const others = files.filter(([n]) => n !== name);
		if (others.length >= FILES_MAX_COUNT) throw new Error(`the folder already has ${FILES_MAX_COUNT} files, the most it keeps; delete one first`);
		const total = others.reduce((sum, [, size]) => sum + size, 0) + bytes;
		if (total > FILES_TOTAL_MAX_BYTES) throw new Error(`the folder would hold ${total} bytes, more than ${FILES_TOTAL_MAX_BYTES}; delete something first`);
		writeAtomically(this.directory, name, utf8(content));
		return bytes;
	}

	delete(name: string): void {
		checkName(name);
		if (!exists(this.directory, name)) throw new Error(`there is no file ${name}; file_list shows the files`);
		this.directory.delete(name);
	}

	#existing(name: string): string {
		const read = readWhole(this.directory, name, FILES_FILE_MAX_BYTES);
		if (read.kind === "missing") return "";
		if (read.kind === "too_big") throw new Error(`${name} is already larger than ${FILES_FILE_MAX_BYTES} bytes`);
		const text = decodeText(read.bytes);
		if (text === undefined) throw new Error(`${name} is not text, so nothing can be appended to it`);
		return text;
	}
}

const NAME_SCHEMA = { type: "string", minLength: 1, maxLength: 64, description: "a plain file name, e.g. notes.txt" } as const;

export function fileTools(workspace: Workspace): Capability[] {
	return [
		{
			group: "files",
			definition: {
				type: "function",
				function: {
					name: "file_list",
					description: "The files in your folder on the board, with their sizes in bytes.",
					parameters: { type: "object", properties: {}, additionalProperties: false },
				},
			},
			run() {
				const files = workspace.list();
				return files.length ? files.map(([name, size]) => `${name} ${size}`).join("\n") : "the folder is empty";
			},
		},
		{
			group: "files",
			definition: {
				type: "function",
				function: {
					name: "file_read",
					description: `Read a text file from your folder, at most ${FILES_READ_MAX_BYTES} bytes from offset; the result says where the next part starts.`,
					parameters: { type: "object", properties: { name: NAME_SCHEMA, offset: { type: "integer", minimum: 0, maximum: FILES_FILE_MAX_BYTES } }, required: ["name"], additionalProperties: false },
				},
			},
			run(args) {
				const { text, size, end } = workspace.read(String(args.name), typeof args.offset === "number" ? args.offset : 0);
				return end < size ? `${text}\n[bytes up to ${end} of ${size}; read on with offset ${end}]` : text;
			},
		},
		{
			group: "files",
			restricted: true,
			// An owner's schedule keeps its log (a watering routine's, a voltage logger's).
			cron: true,
			definition: {
				type: "function",
				function: {
					name: "file_write",
					description: `Write a text file in your folder (replacing it, or appending); at most ${FILES_FILE_MAX_BYTES} bytes a file, ${FILES_MAX_COUNT} files.`,
					parameters: {
						type: "object",
						properties: { name: NAME_SCHEMA, text: { type: "string", maxLength: FILES_FILE_MAX_BYTES }, append: { type: "boolean" } },
						required: ["name", "text"],
						additionalProperties: false,
					},
				},
			},
			run(args) {
				const bytes = workspace.write(String(args.name), String(args.text), args.append === true);
				return `${args.name} now has ${bytes} bytes`;
			},
		},
		{
			group: "files",
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "file_delete",
					description: "Delete a file from your folder.",
					parameters: { type: "object", properties: { name: NAME_SCHEMA }, required: ["name"], additionalProperties: false },
				},
			},
			run(args) {
				workspace.delete(String(args.name));
				return `deleted ${args.name}`;
			},
		},
	];
}

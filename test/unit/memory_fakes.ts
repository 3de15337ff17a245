// Helpers for the memory tests (not a test module itself): a fresh directory per
// test, raw file access to plant damaged files, a tool runner, a console output
// that collects lines, and a request for the providers.
import files from "embedded:storage/files";
import type { Directory } from "embedded:storage/files";
import type { Output } from "console/types";
import type { AgentRequest, ToolOutcome } from "core/types";
import type { CapContext, Capability } from "caps/types";
import type { JsonObject } from "llm/types";
import { Aborter } from "net/abort";

let directories = 0;

/** A new, empty directory under the files root (each test run has a fresh --data). */
export function freshDirectory(label: string): Directory {
	const path = `memtest-${label}-${++directories}`;
	files.createDirectory(path);
	return files.openDirectory({ path });
}

export function writeRaw(directory: Directory, path: string, bytes: ArrayBuffer | string): void {
	const file = directory.openFile({ path, mode: "w" });
	try {
		file.write(typeof bytes === "string" ? ArrayBuffer.fromString(bytes) : bytes, 0);
	} finally {
		file.close();
	}
}

export function readRaw(directory: Directory, path: string): ArrayBuffer {
	const file = directory.openFile({ path });
	try {
		return file.read(file.status().size, 0);
	} finally {
		file.close();
	}
}

export function readText(directory: Directory, path: string): string {
	return String.fromArrayBuffer(readRaw(directory, path));
}

export function names(directory: Directory): string[] {
	return [...directory.scan()];
}

export function request(userText: string): AgentRequest {
	return {
		request_id: 1,
		flags: 0,
		session_id: "",
		user_text: userText,
		source: { channel: "console", chat_id: "", sender_id: "", message_id: "", cap: "" },
	};
}

/** Runs the named tool as the core would (minus the schema check); returns its text, throws its error. */
export async function callTool(tools: Capability[], name: string, args: JsonObject): Promise<string> {
	const spec = tools.find((t) => t.definition.function.name === name);
	if (!spec) throw new Error(`no tool ${name}`);
	const context: CapContext = { request: request(""), signal: new Aborter().signal, progress() {}, role: "owner" };
	const result: ToolOutcome | string = await spec.run(args, context);
	return typeof result === "string" ? result : result.content;
}

export class Lines implements Output {
	all: string[] = [];
	line(text: string): void {
		this.all.push(text);
	}
	take(): string[] {
		const taken = this.all;
		this.all = [];
		return taken;
	}
}

export function settings(values: Record<string, string>): { get(name: string): string | undefined } {
	return { get: (name) => values[name] };
}

/** A log that keeps its lines. */
export function logLines(): { log: (line: string) => void; lines: string[] } {
	const lines: string[] = [];
	return { log: (line) => lines.push(line), lines };
}

// Test helper: a files Directory (or File) with some members replaced, for tests
// that make storage fail, or count what is read, without touching the host.
// Every member not replaced is the real one, bound to the real object.
import type { Directory, File, FileMode } from "embedded:storage/files";

/** Returns the member to use for key: a replacement, or `real` to keep it. */
export type Member = (key: string | symbol, real: unknown) => unknown;

export function replacing<T extends object>(target: T, member: Member): T {
	return new Proxy(target, {
		get(t, key) {
			const value = Reflect.get(t, key);
			return member(key, typeof value === "function" ? value.bind(t) : value);
		},
	});
}

/** root, with `file` replacing members of every File it opens. */
export function replacingFileMembers(root: Directory, file: Member): Directory {
	return replacing(root, (key, real) => key !== "openFile" ? real
		: (options: { path: string; mode?: FileMode }) => replacing((real as Directory["openFile"])(options), file));
}

/** root, with openFile running `before(path)` first (which may throw, like a failing flash). */
export function beforeOpenFile(root: Directory, before: (path: string) => void): Directory {
	return replacing(root, (key, real) => key !== "openFile" ? real
		: (options: { path: string; mode?: FileMode }) => {
			before(options.path);
			return (real as Directory["openFile"])(options);
		});
}

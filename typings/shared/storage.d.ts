// host/storage: the storage looked at before it is mounted (issue 26). littlefs,
// as the Moddable SDK mounts it, formats the partition whenever a mount fails,
// so one bad boot would erase every session, memory and file without a word;
// util/io asks check() first and, on a refusal, gives the firmware a root that
// refuses every call, leaving the storage as it is until factory-reset confirm
// calls erase(). The device implements it in hosts/esp32/storage.ts (over
// storage_guard.c), the lin host in hosts/lin/modules/storage.ts (files.c).
declare module "host/storage" {
	/** "ok" (it mounts), "blank" (nothing on it yet: it is formatted, nothing is
	 *  lost) or a sentence saying why it cannot be mounted (nothing was written).
	 *  The board answers the same all through a boot. */
	export function check(): string;
	/** Erases the storage, so that the next boot finds it blank and formats it. */
	export function erase(): void;
}

// The storage's root Directory (embedded:storage/files' default export on lin);
// undefined on the board when the mount guard refused and nothing mounted.
declare module "host/files" {
	const root: object | undefined;
	export default root;
}

// host/files on the ESP32-S3, the storage root util/io gives the firmware: the
// Moddable SDK's embedded:storage/files (modules/io/files/littlefs/files.js,
// 8.2.3, not in this image) with the mount guard in front of it. The
// SDK's module mounts the "storage" partition when it is loaded and formats it
// whenever littlefs's mount fails, erasing every session, memory and file
// without a word; here host/storage (storage_guard.c) looks first, read-only:
// "ok" or "blank" and the SDK mounts (and formats a blank partition) as its
// files.js does; anything else and nothing mounts, the default export is
// undefined, and util/io gives the firmware a root that refuses every call
// with the reason (the console says it at boot; factory-reset confirm erases).
import config from "mc/config";
import { Directory } from "embedded:x-files-implementation";
import { check } from "host/storage";

function mount(): object | undefined {
	const verdict = check();
	if (verdict !== "ok" && verdict !== "blank") return undefined;
	const root = new (Native("xs_directorylittlefs_destructor"))();
	Object.setPrototypeOf(root, Directory.prototype);
	native("xs_directorylittlefs_bootstrap")(root, (config as unknown as { files?: string }).files);
	return Object.freeze(root);
}

export default mount();

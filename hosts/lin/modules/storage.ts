// host/storage on the lin host (declaration: typings/shared/storage.d.ts): the
// mount guard of hosts/lin/src/files.c over <data>/files, the stand-in for the
// board's littlefs partition: a directory is "ok", nothing there "blank", and
// anything else (a file, a directory that cannot be opened) is refused.
export function check(): string { return __xsclaw.storageCheck(); }
export function erase(): void { __xsclaw.storageErase(); }

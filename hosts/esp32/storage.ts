// host/storage on the ESP32-S3 (declaration: typings/shared/storage.d.ts): the
// mount guard of storage_guard.c, a read-only littlefs mount of the "storage"
// partition before the SDK's (which formats on any mount error).
// hosts/esp32/files.ts asks it before it lets the SDK mount.
export const check: () => string = native("xs_storage_check");
export const erase: () => void = native("xs_storage_erase");

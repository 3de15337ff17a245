// Device build only (manifest.json's esp32 typescript types): the SDK's littlefs
// classes (modules/io/files/littlefs/files-littlefs.js, preloaded) ship no
// declaration; hosts/esp32/files.ts needs only the root's prototype from them.
declare module "embedded:x-files-implementation" {
	export const Directory: { readonly prototype: object };
}

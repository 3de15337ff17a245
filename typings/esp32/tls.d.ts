// Device build only (manifest.json's esp32 typescript types): the TLS socket
// mapped for esp32/* (hosts/esp32/tls/tls.js) ships no declaration. util/io types it as net/types'
// TlsConstructor, the shape the lin host's declaration (typings/lin/net.d.ts)
// states; nothing else imports it.
declare module "embedded:io/socket/tcp/tls" {
	const TLS: unknown;
	export default TLS;
}

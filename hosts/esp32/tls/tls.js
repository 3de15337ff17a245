// embedded:io/socket/tcp/tls on the ESP32-S3: the class of tls_esp32.c over the
// TLS core shared with the lin host (hosts/common/tls). The same shape as the
// lin module (typings/lin-net.d.ts), memory() and forgetSessions() included.
class TLS extends Native("xs_tlscore_destructor") {
	constructor(options) { super(); native("xs_tlscore_constructor").call(this, options); }
	close() { return native("xs_tlscore_close").call(this); }
	read(count) { return native("xs_tlscore_read").call(this, count); }
	write(value) { return native("xs_tlscore_write").call(this, value); }
	get remoteAddress() { return native("xs_tlscore_get_remoteAddress").call(this); }
	get remotePort() { return native("xs_tlscore_get_remotePort").call(this); }
	get format() { return native("xs_tlscore_get_format").call(this); }
	set format(value) { native("xs_tlscore_set_format").call(this, value); }
	get resumed() { return native("xs_tlscore_get_resumed").call(this); }
	get protocol() { return native("xs_tlscore_get_protocol").call(this); }
}

export function memory(resetPeak = false) { return native("xs_tlscore_memory")(resetPeak); }
export function forgetSessions() { native("xs_tlscore_forget_sessions")(); }
export default TLS;

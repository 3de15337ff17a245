// listener on the lin host: the native class of hosts/lin/src/listener.c, with the
// SDK's read(): each accepted connection comes as a ListenerSocket, which
// `new TCP({from})` takes over (embedded:io/socket/listener's shape).
const Listener = __xsclaw.Listener;
const ListenerSocket = __xsclaw.ListenerSocket;
Object.defineProperty(Listener.prototype, "read", {
	value: function read(this: { accept(socket: unknown): unknown }) {
		return this.accept(new ListenerSocket());
	},
	writable: true,
	configurable: true,
});
export default Listener;

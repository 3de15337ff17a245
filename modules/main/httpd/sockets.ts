// httpd/sockets: the server's side of the ECMA-419 sockets, typed for
// httpd/server: the listener (embedded:io/socket/listener: the SDK's lwIP one
// on the board, hosts/lin/src/listener.c on lin) and the TCP socket that takes
// over each connection it accepts (new TCP({from})). With net/sockets (the
// client's), the only module that imports the embedded:io/socket specifiers; a
// module of the main machine's own, so the agent machine loads no listener.
import TCP from "embedded:io/socket/tcp";
import Listener from "embedded:io/socket/listener";
import type { ListenerConstructor, ServerSocketConstructor } from "httpd/server";

export const TcpListener = Listener as unknown as ListenerConstructor;
export const ServerTcp = TCP as unknown as ServerSocketConstructor;

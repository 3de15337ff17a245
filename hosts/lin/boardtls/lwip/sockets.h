/* Shim of lwIP's sockets.h: lwIP's BSD socket calls are Linux's here. */
#ifndef XSCLAW_BOARDTLS_LWIP_SOCKETS_H
#define XSCLAW_BOARDTLS_LWIP_SOCKETS_H
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>
#define lwip_socket socket
#define lwip_connect connect
#define lwip_send send
#define lwip_recv recv
#define lwip_close close
#define lwip_select select
#define lwip_getsockopt getsockopt
#define lwip_setsockopt setsockopt
#define lwip_fcntl fcntl
#define lwip_inet_pton inet_pton
#endif

/* Stand-in: lwIP's sockets.h as ESP-IDF builds it (BSD types and constants,
 * the lwip_* calls, inet_pton). The host's headers give the types. */
#ifndef XSCLAW_STANDIN_LWIP_SOCKETS_H
#define XSCLAW_STANDIN_LWIP_SOCKETS_H
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
int lwip_socket(int domain, int type, int protocol);
int lwip_connect(int s, const struct sockaddr *name, socklen_t namelen);
int lwip_send(int s, const void *dataptr, size_t size, int flags);
int lwip_recv(int s, void *mem, size_t len, int flags);
int lwip_close(int s);
int lwip_fcntl(int s, int cmd, int val);
int lwip_setsockopt(int s, int level, int optname, const void *optval, socklen_t optlen);
int lwip_getsockopt(int s, int level, int optname, void *optval, socklen_t *optlen);
int lwip_select(int maxfdp1, fd_set *readset, fd_set *writeset, fd_set *exceptset, struct timeval *timeout);
#endif

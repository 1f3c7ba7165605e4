/*
 * c_echo_server: single-threaded epoll TCP echo server (the C reference).
 *
 * Usage: c_echo_server HOST PORT
 *
 * Level-triggered epoll. Each readable event performs one read(2) into a
 * shared 64 KiB buffer and writes everything back. If the write is partial,
 * the unwritten tail is copied to a per-connection pending buffer, the
 * connection switches from EPOLLIN to EPOLLOUT, and reading stops until the
 * pending bytes are drained. No allocation happens on the hot path (pending
 * buffers are allocated once per connection, lazily, and reused).
 *
 * Build: gcc -O2 -Wall -Wextra -o c_echo_server c_echo_server.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE (64 * 1024)
#define MAX_EVENTS 256

struct conn {
    int fd;
    char *pend;      /* pending output, BUF_SIZE bytes, allocated on first use */
    size_t pend_off; /* first unsent byte */
    size_t pend_len; /* end of pending data */
};

static volatile sig_atomic_t stop_flag = 0;
static void on_signal(int sig) { (void)sig; stop_flag = 1; }

static int epfd;
static char rbuf[BUF_SIZE];

static void conn_close(struct conn *c)
{
    close(c->fd); /* also removes it from the epoll set */
    free(c->pend);
    free(c);
}

static int set_events(struct conn *c, uint32_t ev)
{
    struct epoll_event e = { .events = ev, .data.ptr = c };
    return epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e);
}

/* Try to drain pending output. Returns 0 ok (maybe still pending), -1 error. */
static int flush_pending(struct conn *c)
{
    while (c->pend_off < c->pend_len) {
        ssize_t n = write(c->fd, c->pend + c->pend_off, c->pend_len - c->pend_off);
        if (n > 0) {
            c->pend_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            return -1;
        }
    }
    c->pend_off = c->pend_len = 0;
    return 0;
}

/* Handle a readable connection: one read, echo it back. 0 ok, -1 close. */
static int on_readable(struct conn *c)
{
    ssize_t n;
    do {
        n = read(c->fd, rbuf, sizeof rbuf);
    } while (n < 0 && errno == EINTR);
    if (n == 0)
        return -1;
    if (n < 0)
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;

    size_t len = (size_t)n, off = 0;
    while (off < len) {
        ssize_t w = write(c->fd, rbuf + off, len - off);
        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            return -1;
        }
    }
    if (off < len) {
        if (!c->pend && !(c->pend = malloc(BUF_SIZE)))
            return -1;
        memcpy(c->pend, rbuf + off, len - off);
        c->pend_off = 0;
        c->pend_len = len - off;
        if (set_events(c, EPOLLOUT) < 0)
            return -1;
    }
    return 0;
}

static int on_writable(struct conn *c)
{
    if (flush_pending(c) < 0)
        return -1;
    if (c->pend_len == 0 && set_events(c, EPOLLIN) < 0)
        return -1;
    return 0;
}

static void accept_all(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                perror("accept4");
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) < 0) {
            perror("epoll_ctl add");
            conn_close(c);
        }
    }
}

static int listen_on(const char *host, const char *port)
{
    struct addrinfo hints, *res, *ai;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "getaddrinfo %s:%s: %s\n", host, port, gai_strerror(rc));
        return -1;
    }
    int lfd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                     ai->ai_protocol);
        if (lfd < 0)
            continue;
        int one = 1;
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(lfd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(lfd, 4096) == 0)
            break;
        close(lfd);
        lfd = -1;
    }
    freeaddrinfo(res);
    if (lfd < 0)
        fprintf(stderr, "cannot listen on %s:%s: %s\n", host, port, strerror(errno));
    return lfd;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s HOST PORT\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: epoll_wait returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int lfd = listen_on(argv[1], argv[2]);
    if (lfd < 0)
        return 1;
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) {
        perror("epoll_create1");
        return 1;
    }
    /* The listener is identified by a NULL data pointer. */
    struct epoll_event le = { .events = EPOLLIN, .data.ptr = NULL };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &le) < 0) {
        perror("epoll_ctl listen");
        return 1;
    }

    struct epoll_event evs[MAX_EVENTS];
    while (!stop_flag) {
        int n = epoll_wait(epfd, evs, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("epoll_wait");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            uint32_t ev = evs[i].events;
            if (!c) {
                accept_all(lfd);
                continue;
            }
            int rc = 0;
            if (ev & EPOLLOUT)
                rc = on_writable(c);
            else if (ev & EPOLLIN)
                rc = on_readable(c); /* EOF shows up as read() == 0 */
            else if (ev & (EPOLLERR | EPOLLHUP))
                rc = -1;
            if (rc < 0)
                conn_close(c);
        }
    }
    close(lfd);
    close(epfd);
    return 0;
}

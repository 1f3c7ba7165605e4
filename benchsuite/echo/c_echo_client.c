/*
 * c_echo_client: single-threaded epoll closed-loop TCP echo client (the C
 * reference load generator).
 *
 * Usage: c_echo_client HOST PORT CONNS DEPTH SIZE SECONDS [WARMUP_SECONDS]
 *
 * Opens CONNS connections (TCP_NODELAY) and keeps DEPTH messages of SIZE bytes
 * in flight on each. The server is a pure byte echo, so replies are counted by
 * received bytes: every SIZE bytes received on a connection completes one
 * message and releases one more SIZE-byte message to send. All messages are
 * identical, so the output stream of a connection is periodic with period SIZE
 * and is sent straight out of one prebuilt buffer; a connection only keeps a
 * count of bytes owed (written when the socket accepts them, EPOLLOUT on
 * EAGAIN). Several replies completed by one read are sent with one write.
 *
 * After WARMUP_SECONDS (default 1) the counter is reset; SECONDS later one
 * line is printed:  msgs_per_s=<float> messages=<int> elapsed_s=<float>
 *
 * Build: gcc -O2 -Wall -Wextra -o c_echo_client c_echo_client.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#define RBUF_SIZE (64 * 1024)
#define MAX_EVENTS 1024

struct conn {
    int fd;
    int want_out;    /* EPOLLOUT currently registered */
    size_t rem;      /* received bytes of the current, incomplete reply */
    size_t owed;     /* bytes released for sending but not yet written */
    uint64_t sent;   /* total bytes written (position in the periodic stream) */
};

static int epfd;
static size_t msg_size;
static char *txbuf;     /* (DEPTH + 1) * SIZE bytes of repeated message */
static char rbuf[RBUF_SIZE];
static uint64_t messages;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void set_out(struct conn *c, int on)
{
    if (c->want_out == on)
        return;
    struct epoll_event e = { .events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c };
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e) < 0)
        die("epoll_ctl mod");
    c->want_out = on;
}

/* Write as much of the owed bytes as the socket accepts. */
static void flush_owed(struct conn *c)
{
    while (c->owed > 0) {
        /* owed <= DEPTH * SIZE, so one write from the offset always fits */
        size_t off = (size_t)(c->sent % msg_size);
        ssize_t n = write(c->fd, txbuf + off, c->owed);
        if (n > 0) {
            c->owed -= (size_t)n;
            c->sent += (uint64_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            set_out(c, 1);
            return;
        } else {
            die("write");
        }
    }
    set_out(c, 0);
}

static void on_readable(struct conn *c)
{
    ssize_t n;
    do {
        n = read(c->fd, rbuf, sizeof rbuf);
    } while (n < 0 && errno == EINTR);
    if (n == 0) {
        fprintf(stderr, "c_echo_client: server closed a connection\n");
        exit(1);
    }
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        die("read");
    }
    c->rem += (size_t)n;
    size_t done = c->rem / msg_size;
    if (done == 0)
        return;
    c->rem -= done * msg_size;
    messages += done;
    c->owed += done * msg_size;
    if (!c->want_out) /* if EPOLLOUT is pending, wait for it */
        flush_owed(c);
}

static int connect_to(const char *host, const char *port)
{
    struct addrinfo hints, *res, *ai;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "getaddrinfo %s:%s: %s\n", host, port, gai_strerror(rc));
        exit(1);
    }
    int fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, "cannot connect to %s:%s: %s\n", host, port, strerror(errno));
        exit(1);
    }
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
        die("fcntl");
    return fd;
}

static long parse_pos(const char *s, const char *name)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v <= 0) {
        fprintf(stderr, "invalid %s: %s\n", name, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr,
                "usage: %s HOST PORT CONNS DEPTH SIZE SECONDS [WARMUP_SECONDS]\n",
                argv[0]);
        return 2;
    }
    long conns = parse_pos(argv[3], "CONNS");
    long depth = parse_pos(argv[4], "DEPTH");
    msg_size = (size_t)parse_pos(argv[5], "SIZE");
    double seconds = strtod(argv[6], NULL);
    double warmup = argc == 8 ? strtod(argv[7], NULL) : 1.0;
    if (!(seconds > 0) || !(warmup >= 0)) {
        fprintf(stderr, "invalid SECONDS/WARMUP_SECONDS\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);

    size_t txlen = (size_t)(depth + 1) * msg_size;
    txbuf = malloc(txlen);
    struct conn *cs = calloc((size_t)conns, sizeof *cs);
    if (!txbuf || !cs)
        die("malloc");
    for (size_t i = 0; i < txlen; i++)
        txbuf[i] = (char)('a' + (i % msg_size) % 26);

    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        die("epoll_create1");
    for (long i = 0; i < conns; i++) {
        struct conn *c = &cs[i];
        c->fd = connect_to(argv[1], argv[2]);
        struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &e) < 0)
            die("epoll_ctl add");
    }

    double t_start = now_s();
    double t_measure = t_start + warmup;
    double t_end = t_measure + seconds;
    int measuring = warmup <= 0;
    if (measuring)
        t_measure = t_start;

    for (long i = 0; i < conns; i++) {
        cs[i].owed = (size_t)depth * msg_size;
        flush_owed(&cs[i]);
    }

    struct epoll_event evs[MAX_EVENTS];
    double t;
    for (;;) {
        t = now_s();
        if (!measuring && t >= t_measure) {
            messages = 0;
            t_measure = t;
            t_end = t + seconds;
            measuring = 1;
        }
        if (measuring && t >= t_end)
            break;
        int n = epoll_wait(epfd, evs, MAX_EVENTS, 10);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            uint32_t ev = evs[i].events;
            if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
                on_readable(c); /* may add to owed */
            if (ev & EPOLLOUT)
                flush_owed(c);
        }
    }
    double elapsed = t - t_measure;
    printf("msgs_per_s=%.1f messages=%llu elapsed_s=%.6f\n",
           (double)messages / elapsed, (unsigned long long)messages, elapsed);
    fflush(stdout);
    for (long i = 0; i < conns; i++)
        close(cs[i].fd);
    return 0;
}

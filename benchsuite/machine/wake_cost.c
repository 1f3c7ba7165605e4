// Who pays for a sleep: two threads pinned to CPUs 0 and 1 pass one 64-byte message
// back and forth over a connected pair (TCP on loopback, or a Unix socketpair), each
// waiting for it in epoll_wait, either blocking (it sleeps; its peer must wake it) or
// with a zero timeout (it spins and never sleeps). Per round trip it prints each
// thread's own CPU time (CLOCK_THREAD_CPUTIME_ID, what /proc/PID/stat adds up) and
// sleeps (voluntary context switches), so the cost of one sleep can be split between
// the thread that sleeps and the thread that wakes it.
//
// Usage: wake_cost tcp|unix ROUND_TRIPS SLEEP_A SLEEP_B   (SLEEP_x: 1 block, 0 spin)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long round_trips;

struct side {
    int fd, cpu, starts, blocks;
    double cpu_s;
    long sleeps;
};

static double thread_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void *run(void *p) {
    struct side *s = p;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(s->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set)) die("affinity");
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->fd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev)) die("epoll_ctl");
    char buf[64] = {0};
    struct rusage r0, r1;
    getrusage(RUSAGE_THREAD, &r0);
    double c0 = thread_cpu();
    if (s->starts && write(s->fd, buf, sizeof buf) != sizeof buf) die("write");
    for (long i = 0; i < round_trips; i++) {
        struct epoll_event got[4];
        while (epoll_wait(ep, got, 4, s->blocks ? -1 : 0) <= 0) {
        }
        size_t have = 0;
        while (have < sizeof buf) {
            ssize_t n = read(s->fd, buf + have, sizeof buf - have);
            if (n <= 0) die("read");
            have += n;
        }
        // The starter's last read ends the exchange.
        if (!(s->starts && i == round_trips - 1) && write(s->fd, buf, sizeof buf) != sizeof buf)
            die("write");
    }
    s->cpu_s = thread_cpu() - c0;
    getrusage(RUSAGE_THREAD, &r1);
    s->sleeps = r1.ru_nvcsw - r0.ru_nvcsw;
    return NULL;
}

static void tcp_pair(int sv[2]) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (bind(l, (void *)&a, sizeof a) || listen(l, 1) || getsockname(l, (void *)&a, &len))
        die("listen");
    sv[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(sv[0], (void *)&a, sizeof a)) die("connect");
    sv[1] = accept(l, NULL, NULL);
    if (sv[1] < 0) die("accept");
    int one = 1;
    setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    close(l);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s tcp|unix ROUND_TRIPS SLEEP_A SLEEP_B\n", argv[0]);
        return 2;
    }
    round_trips = atol(argv[2]);
    int sv[2];
    if (!strcmp(argv[1], "tcp"))
        tcp_pair(sv);
    else if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        die("socketpair");
    struct side a = {.fd = sv[0], .cpu = 0, .starts = 1, .blocks = atoi(argv[3])};
    struct side b = {.fd = sv[1], .cpu = 1, .starts = 0, .blocks = atoi(argv[4])};
    struct timespec w0, w1;
    pthread_t ta, tb;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    pthread_create(&ta, NULL, run, &a);
    pthread_create(&tb, NULL, run, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    double wall = (w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) / 1e9;
    // One TSV row: transport, modes, then per round trip: wall us, CPU us and sleeps of A and B.
    printf("%s\t%s\t%s\t%.2f\t%.2f\t%.3f\t%.2f\t%.3f\n", argv[1], a.blocks ? "sleep" : "spin",
           b.blocks ? "sleep" : "spin", wall / round_trips * 1e6, a.cpu_s / round_trips * 1e6,
           (double)a.sleeps / round_trips, b.cpu_s / round_trips * 1e6,
           (double)b.sleeps / round_trips);
    return 0;
}

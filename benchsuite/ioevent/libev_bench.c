/*
 * libev_bench.c: the libev/libevent event-loop benchmark method
 * (libev.schmorp.de/bench.html, libevent test/bench.c) on libev's API.
 *
 * PAIRS AF_UNIX socketpairs, a read watcher on one end of each.  Per
 * iteration: re-arm every watcher, run one non-blocking loop pass, write one
 * byte into ACTIVE evenly spaced pairs, then run non-blocking loop passes
 * until every byte written has been read.  Each read callback forwards one
 * byte to the next pair while the WRITES budget lasts, so each iteration
 * ends with reads == fired == ACTIVE + WRITES.
 *
 *   total_us: re-arm + first pass + sends + event processing
 *   loop_us:  event processing only (from the first send on)
 *
 * Usage: libev_bench [-n PAIRS] [-a ACTIVE] [-w WRITES] [-i ITERATIONS]
 * Build: gcc -O2 -Wall -Wextra -o libev_bench libev_bench.c -lev
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

static int num_pipes = 100, num_active = 1, num_writes = 100, iterations = 25;
static int (*pairs)[2];
static ev_io *watchers;
static long count, fired, writes, failures;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    int idx = (int)(w - watchers);
    unsigned char ch;
    ssize_t n = recv(pairs[idx][0], &ch, sizeof(ch), 0);
    if (n > 0)
        count += n;
    else
        failures++;
    if (writes > 0) {
        int widx = (idx + 1) % num_pipes;
        (void)send(pairs[widx][1], "e", 1, 0);
        writes--;
        fired++;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < -1000000000L || v > 1000000000L)
        return -1;
    *out = (int)v;
    return 0;
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-n PAIRS] [-a ACTIVE] [-w WRITES] [-i ITERATIONS]\n"
                    "  defaults: -n 100 -a 1 -w 100 -i 25\n", prog);
    exit(2);
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "n:a:w:i:h")) != -1) {
        int *dst;
        switch (c) {
        case 'n': dst = &num_pipes; break;
        case 'a': dst = &num_active; break;
        case 'w': dst = &num_writes; break;
        case 'i': dst = &iterations; break;
        default: usage(argv[0]); return 2;
        }
        if (parse_int(optarg, dst) != 0)
            usage(argv[0]);
    }
    if (optind != argc || num_pipes < 1 || num_active < 1 || num_active > num_pipes ||
        num_writes < 0 || iterations < 2) {
        fprintf(stderr, "%s: need PAIRS >= 1, 1 <= ACTIVE <= PAIRS, WRITES >= 0, "
                        "ITERATIONS >= 2\n", argv[0]);
        return 2;
    }

    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = rl;
        want.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &want) == 0)
            rl = want;
    }
    if ((rlim_t)2 * (rlim_t)num_pipes + 32 > rl.rlim_cur) {
        fprintf(stderr, "%s: %d pairs need %d file descriptors but RLIMIT_NOFILE is %llu.\n",
                argv[0], num_pipes, 2 * num_pipes + 32, (unsigned long long)rl.rlim_cur);
        return 2;
    }

    pairs = calloc((size_t)num_pipes, sizeof(*pairs));
    watchers = calloc((size_t)num_pipes, sizeof(*watchers));
    double *tot = calloc((size_t)iterations, sizeof(double));
    double *lp = calloc((size_t)iterations, sizeof(double));
    if (!pairs || !watchers || !tot || !lp) {
        perror("calloc");
        return 1;
    }
    for (int i = 0; i < num_pipes; i++) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[i]) != 0) {
            perror("socketpair");
            return 1;
        }
        for (int j = 0; j < 2; j++) {
            int fl = fcntl(pairs[i][j], F_GETFL);
            if (fl < 0 || fcntl(pairs[i][j], F_SETFL, fl | O_NONBLOCK) != 0) {
                perror("fcntl");
                return 1;
            }
        }
    }

    struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
    if (!loop) {
        fprintf(stderr, "%s: ev_default_loop failed\n", argv[0]);
        return 1;
    }
    {
        unsigned b = ev_backend(loop);
        fprintf(stderr, "libev %d.%d backend=%s pairs=%d active=%d writes=%d iterations=%d\n",
                ev_version_major(), ev_version_minor(),
                b == EVBACKEND_EPOLL ? "epoll" : b == EVBACKEND_POLL ? "poll" :
                b == EVBACKEND_SELECT ? "select" : "other",
                num_pipes, num_active, num_writes, iterations);
    }
    for (int i = 0; i < num_pipes; i++)
        ev_io_init(&watchers[i], read_cb, pairs[i][0], EV_READ);

    for (int it = 0; it < iterations; it++) {
        double t0 = now_us();
        for (int i = 0; i < num_pipes; i++) {
            ev_io_stop(loop, &watchers[i]);
            ev_io_set(&watchers[i], pairs[i][0], EV_READ);
            ev_io_start(loop, &watchers[i]);
        }
        ev_run(loop, EVRUN_NOWAIT);

        fired = 0;
        int space = num_pipes / num_active;
        for (int i = 0; i < num_active; i++) {
            (void)send(pairs[i * space][1], "e", 1, 0);
            fired++;
        }
        count = 0;
        writes = num_writes;
        double t1 = now_us();
        unsigned long passes = 0;
        do {
            ev_run(loop, EVRUN_NOWAIT);
            /* safety net only: a lost byte would otherwise spin forever */
            if ((++passes & 0xfffff) == 0 && now_us() - t1 > 10e6) {
                fprintf(stderr, "%s: iteration %d stuck: reads=%ld fired=%ld failures=%ld\n",
                        argv[0], it + 1, count, fired, failures);
                return 1;
            }
        } while (count != fired);
        double t2 = now_us();

        tot[it] = t2 - t0;
        lp[it] = t2 - t1;
        printf("iter=%d total_us=%.3f loop_us=%.3f reads=%ld fired=%ld\n",
               it + 1, tot[it], lp[it], count, fired);
    }
    printf("median_total_us=%.3f median_loop_us=%.3f\n",
           median(tot + 1, iterations - 1), median(lp + 1, iterations - 1));
    if (failures) {
        fprintf(stderr, "%s: %ld failed reads\n", argv[0], failures);
        return 1;
    }
    return 0;
}

/*
 * libevent_bench.c: the libev/libevent event-loop benchmark method
 * (libev.schmorp.de/bench.html, libevent test/bench.c) on libevent's API.
 *
 * PAIRS AF_UNIX socketpairs, a read event on one end of each.  Per
 * iteration: re-arm every event, run one non-blocking loop pass, write one
 * byte into ACTIVE evenly spaced pairs, then run non-blocking loop passes
 * until every byte written has been read.  Each read callback forwards one
 * byte to the next pair while the WRITES budget lasts, so each iteration
 * ends with reads == fired == ACTIVE + WRITES.
 *
 *   total_us: re-arm + first pass + sends + event processing
 *   loop_us:  event processing only (from the first send on)
 *
 * Usage: libevent_bench [-n PAIRS] [-a ACTIVE] [-w WRITES] [-i ITERATIONS]
 * Build: gcc -O2 -Wall -Wextra -o libevent_bench libevent_bench.c -levent
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

#include <event2/event.h>
#include <event2/event_struct.h>

static int num_pipes = 100, num_active = 1, num_writes = 100, iterations = 25;
static int (*pairs)[2];
static struct event *events;
static long count, fired, writes, failures;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void read_cb(evutil_socket_t fd, short which, void *arg)
{
    (void)which;
    int idx = (int)(intptr_t)arg;
    unsigned char ch;
    ssize_t n = recv(fd, &ch, sizeof(ch), 0);
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
    events = calloc((size_t)num_pipes, sizeof(*events));
    double *tot = calloc((size_t)iterations, sizeof(double));
    double *lp = calloc((size_t)iterations, sizeof(double));
    if (!pairs || !events || !tot || !lp) {
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

    struct event_base *base = event_base_new();
    if (!base) {
        fprintf(stderr, "%s: event_base_new failed\n", argv[0]);
        return 1;
    }
    fprintf(stderr, "libevent %s backend=%s pairs=%d active=%d writes=%d iterations=%d\n",
            event_get_version(), event_base_get_method(base),
            num_pipes, num_active, num_writes, iterations);

    for (int it = 0; it < iterations; it++) {
        double t0 = now_us();
        for (int i = 0; i < num_pipes; i++) {
            if (event_initialized(&events[i]))
                event_del(&events[i]);
            event_assign(&events[i], base, pairs[i][0], EV_READ | EV_PERSIST, read_cb,
                         (void *)(intptr_t)i);
            event_add(&events[i], NULL);
        }
        event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);

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
            event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
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

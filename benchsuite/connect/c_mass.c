/* Reference for the connect benchmark: the same method as wirebench connect and
 * wirebench serve echo --processes, in plain C with epoll, nothing else.
 *
 *   c_mass server ADDR PORT PROCS
 *       PROCS forked processes, each with its own SO_REUSEPORT listener and an
 *       epoll loop: accept, hold, echo what arrives. Prints "worker pids: a,b,..."
 *       and runs until SIGTERM/SIGINT (the workers die with it).
 *   c_mass client ADDR PORT N PROCS CONCURRENCY SRC_FIRST SRC_COUNT
 *       PROCS forked processes open N connections in total (non-blocking connect,
 *       IP_BIND_ADDRESS_NO_PORT, source addresses SRC_FIRST.. SRC_COUNT of them),
 *       CONCURRENCY attempts in flight in total. Prints
 *       "established E failed F in S seconds" once all have settled, then exits.
 *
 * Build: cc -O2 -o c_mass c_mass.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void die(const char *what) {
    perror(what);
    exit(2);
}

static void server_worker(const char *addr, int port) {
    int one = 1;
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (l < 0) die("socket");
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(l, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, addr, &sa.sin_addr);
    if (bind(l, (struct sockaddr *)&sa, sizeof sa) != 0) die("bind");
    if (listen(l, 4096) != 0) die("listen");
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = l};
    epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
    static struct epoll_event evs[1024];
    static char buf[65536];
    for (;;) {
        int n = epoll_wait(ep, evs, 1024, -1);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == l) {
                for (;;) {
                    int c = accept4(l, NULL, NULL, SOCK_NONBLOCK);
                    if (c < 0) break;
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
                }
                continue;
            }
            ssize_t r = read(fd, buf, sizeof buf);
            if (r > 0) {
                if (write(fd, buf, r) != r) close(fd);
            } else if (r == 0 || errno != EAGAIN) {
                close(fd);
            }
        }
    }
}

static int server(const char *addr, int port, int procs) {
    pid_t parent = getpid();
    pid_t *pids = calloc(procs, sizeof *pids);
    for (int i = 0; i < procs; i++) {
        pid_t p = fork();
        if (p == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(1);
            raise_nofile();
            server_worker(addr, port);
            _exit(0);
        }
        pids[i] = p;
    }
    printf("worker pids: ");
    for (int i = 0; i < procs; i++) printf("%s%d", i ? "," : "", pids[i]);
    printf("\n");
    fflush(stdout);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    for (int i = 0; i < procs; i++) kill(pids[i], SIGKILL);
    while (wait(NULL) > 0) {}
    return 0;
}

/* One client process: opens `count` connections; writes "E F\n" to `out` when settled. */
static void client_worker(const char *addr, int port, long first, long count, int conc,
                          uint32_t src_first, int src_count, int out, int go) {
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, addr, &dst.sin_addr);
    int ep = epoll_create1(0);
    static struct epoll_event evs[1024];
    char c;
    if (read(go, &c, 1) != 1) _exit(1);
    long started = 0, established = 0, failed = 0;
    int inflight = 0, one = 1;
    while (established + failed < count) {
        while (started < count && inflight < conc) {
            long g = first + started++;
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            if (fd < 0) { failed++; continue; }
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (src_count > 0) {
                setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
                struct sockaddr_in src = {.sin_family = AF_INET};
                src.sin_addr.s_addr = htonl(src_first + (uint32_t)(g % src_count));
                if (bind(fd, (struct sockaddr *)&src, sizeof src) != 0) { close(fd); failed++; continue; }
            }
            if (connect(fd, (struct sockaddr *)&dst, sizeof dst) != 0 && errno != EINPROGRESS) {
                close(fd); failed++; continue;
            }
            struct epoll_event ev = {.events = EPOLLOUT, .data.fd = fd};
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
            inflight++;
        }
        int n = epoll_wait(ep, evs, 1024, 100);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd, err = 0;
            socklen_t len = sizeof err;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            inflight--;
            if (err == 0) {
                established++;
                epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL); /* held, nothing more to watch */
            } else {
                failed++;
                close(fd);
            }
        }
    }
    dprintf(out, "%ld %ld\n", established, failed);
    pause(); /* hold until the parent ends us */
}

static int client(const char *addr, int port, long n, int procs, int conc,
                  const char *src_first, int src_count) {
    struct in_addr sf = {0};
    if (src_count > 0) inet_pton(AF_INET, src_first, &sf);
    int res[2], go[2];
    if (pipe(res) || pipe(go)) die("pipe");
    pid_t parent = getpid();
    pid_t *pids = calloc(procs, sizeof *pids);
    long base = n / procs, extra = n % procs, first = 0;
    for (int i = 0; i < procs; i++) {
        long count = base + (i < extra);
        pid_t p = fork();
        if (p == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(1);
            raise_nofile();
            close(res[0]);
            close(go[1]);
            int per = conc / procs > 0 ? conc / procs : 1;
            client_worker(addr, port, first, count, per, ntohl(sf.s_addr), src_count, res[1], go[0]);
            _exit(0);
        }
        pids[i] = p;
        first += count;
    }
    close(res[1]);
    close(go[0]);
    usleep(200000); /* let every worker reach its read(go) */
    double t0 = now_s();
    for (int i = 0; i < procs; i++)
        if (write(go[1], "g", 1) != 1) die("write");
    FILE *in = fdopen(res[0], "r");
    long est = 0, fail = 0, e, f;
    for (int i = 0; i < procs; i++) {
        if (fscanf(in, "%ld %ld", &e, &f) != 2) break;
        est += e;
        fail += f;
    }
    double t = now_s() - t0;
    printf("established %ld failed %ld in %.3f seconds\n", est, fail, t);
    fflush(stdout);
    for (int i = 0; i < procs; i++) kill(pids[i], SIGKILL);
    while (wait(NULL) > 0) {}
    return fail == 0 && est == n ? 0 : 1;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc == 5 && strcmp(argv[1], "server") == 0)
        return server(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc == 9 && strcmp(argv[1], "client") == 0)
        return client(argv[2], atoi(argv[3]), atol(argv[4]), atoi(argv[5]), atoi(argv[6]),
                      argv[7], atoi(argv[8]));
    fprintf(stderr,
            "usage: c_mass server ADDR PORT PROCS\n"
            "       c_mass client ADDR PORT N PROCS CONCURRENCY SRC_FIRST SRC_COUNT\n");
    return 2;
}

/*
 * tick: the floor of a user-space periodic regulator on this machine.
 *
 * Peer of `criticore regulate` for benches/regulator_cpu.py (issue 9). It
 * does only what any user-space MemGuard-style loop must do, and nothing of
 * criticore's own work (no counters read, no engine rules, no logs):
 *
 *   - SCHED_FIFO 90 and 1 ns timer slack (what criticore's regulator sets);
 *   - block {SIGRTMIN, SIGIO, SIGINT, SIGTERM, SIGCHLD} and loop on
 *     sigtimedwait() with a relative timeout to the next period boundary
 *     (CLOCK_MONOTONIC), like crates/criticore-rt/src/regulator.rs;
 *     lateness = wake time - boundary; missed boundaries are skipped;
 *   - with --children N (the "throttle every period" floor): N busy child
 *     processes, child i pinned to CPU i mod ncpu, SCHED_OTHER. At each new
 *     period (a counter on a shared page) a child sends one SIGRTMIN to the
 *     loop with its CLOCK_MONOTONIC send time in sival_ptr, as an exhausted
 *     load does; the loop answers with kill(SIGSTOP) and, at the next
 *     boundary, kill(SIGCONT). reaction = stop issued - signal sent, i.e.
 *     signal delivery + wake-up + the stop call.
 *
 * CPU = CLOCK_THREAD_CPUTIME_ID of the loop thread over the loop (the same
 * clock criticore's summary uses for cpu_ns).
 *
 * Usage: tick PERIOD_NS DURATION_NS [CHILDREN [nocldstop]]
 * "nocldstop" sets SA_NOCLDSTOP on SIGCHLD, so stopping and continuing the
 * children sends no SIGCHLD (by default each one wakes the loop, as it does
 * in any regulator that waits for SIGCHLD and stops its own children).
 * Prints one JSON object on stdout.
 *
 * Build: cc -O2 -o tick tick.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHILDREN 8

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank, as criticore_rt::regulator::percentile. */
static uint64_t pct(uint64_t *v, size_t n, double p) {
    if (n == 0) return 0;
    size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return v[rank - 1];
}

static double mean(const uint64_t *v, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)v[i];
    return n ? s / (double)n : 0.0;
}

static void noop(int sig) { (void)sig; }

struct shared {
    volatile uint64_t period;
};

static void child(int index, pid_t parent, struct shared *sh) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    struct sched_param sp = {0};
    sched_setscheduler(0, SCHED_OTHER, &sp);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(index % (ncpu > 0 ? ncpu : 1), &set);
    sched_setaffinity(0, sizeof set, &set);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    uint64_t last = sh->period;
    for (;;) {
        uint64_t p = sh->period;
        if (p != last) {
            last = p;
            union sigval v;
            v.sival_ptr = (void *)(uintptr_t)now_ns();
            sigqueue(parent, SIGRTMIN, v);
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: tick PERIOD_NS DURATION_NS [CHILDREN [nocldstop]]\n");
        return 2;
    }
    uint64_t period = strtoull(argv[1], NULL, 10);
    uint64_t duration = strtoull(argv[2], NULL, 10);
    int nchildren = argc > 3 ? atoi(argv[3]) : 0;
    int nocldstop = argc > 4 && strcmp(argv[4], "nocldstop") == 0;
    if (period == 0 || duration == 0 || nchildren < 0 || nchildren > MAX_CHILDREN) {
        fprintf(stderr, "tick: bad arguments\n");
        return 2;
    }

    sigset_t set;
    sigemptyset(&set);
    int sigs[] = {SIGRTMIN, SIGIO, SIGINT, SIGTERM, SIGCHLD};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&set, sigs[i]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = noop;
    sigaction(SIGRTMIN, &sa, NULL);
    sigaction(SIGIO, &sa, NULL);
    if (nocldstop) {
        sa.sa_flags = SA_NOCLDSTOP;
        sigaction(SIGCHLD, &sa, NULL);
        sa.sa_flags = 0;
    }
    sigprocmask(SIG_BLOCK, &set, NULL);

    struct sched_param sp = {.sched_priority = 90};
    int fifo_ok = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);

    struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    sh->period = 0;
    pid_t kids[MAX_CHILDREN];
    int stopped[MAX_CHILDREN] = {0};
    pid_t self = getpid();
    for (int i = 0; i < nchildren; i++) {
        pid_t p = fork();
        if (p < 0) {
            perror("fork");
            return 1;
        }
        if (p == 0) child(i, self, sh);
        kids[i] = p;
    }
    if (nchildren) usleep(200000); /* let the children reach their loop */

    size_t cap = (size_t)(duration / period) + 16;
    uint64_t *late = malloc(cap * sizeof *late);
    size_t cap_r = cap * (nchildren ? nchildren : 1) + 16;
    uint64_t *react = malloc(cap_r * sizeof *react);
    uint64_t *stopcall = malloc(cap_r * sizeof *stopcall);
    if (!late || !react || !stopcall) return 1;
    size_t nlate = 0, nreact = 0;
    uint64_t signals = 0, wakeups = 0, periods = 0;

    uint64_t t0 = now_ns();
    uint64_t cpu0 = thread_cpu_ns();
    uint64_t next = t0 + period, end = t0 + duration;
    int interrupted = 0;
    for (;;) {
        uint64_t wake = next < end ? next : end;
        uint64_t n0 = now_ns();
        uint64_t wait = wake > n0 ? wake - n0 : 0;
        struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000ull), .tv_nsec = (long)(wait % 1000000000ull)};
        siginfo_t info;
        int got = sigtimedwait(&set, &info, &ts);
        uint64_t now = now_ns();
        wakeups++;
        if (got == SIGINT || got == SIGTERM) {
            interrupted = 1;
            break;
        }
        if (got == SIGRTMIN) {
            signals++;
            for (int i = 0; i < nchildren; i++) {
                if (kids[i] == info.si_pid && !stopped[i]) {
                    kill(kids[i], SIGSTOP);
                    uint64_t t = now_ns();
                    stopped[i] = 1;
                    if (nreact < cap_r) {
                        uint64_t sent = (uint64_t)(uintptr_t)info.si_value.sival_ptr;
                        react[nreact] = t > sent ? t - sent : 0;
                        stopcall[nreact] = t - now;
                        nreact++;
                    }
                }
            }
        }
        if (now >= next) {
            if (nlate < cap) late[nlate++] = now - next;
            while (next <= now) {
                next += period;
                periods++;
            }
            sh->period = periods;
            for (int i = 0; i < nchildren; i++) {
                if (stopped[i]) {
                    kill(kids[i], SIGCONT);
                    stopped[i] = 0;
                }
            }
        }
        if (now >= end) break;
    }
    uint64_t elapsed = now_ns() - t0;
    uint64_t cpu = thread_cpu_ns() - cpu0;

    for (int i = 0; i < nchildren; i++) {
        kill(kids[i], SIGCONT);
        kill(kids[i], SIGKILL);
    }
    for (int i = 0; i < nchildren; i++) waitpid(kids[i], NULL, 0);

    qsort(late, nlate, sizeof *late, cmp_u64);
    qsort(react, nreact, sizeof *react, cmp_u64);
    qsort(stopcall, nreact, sizeof *stopcall, cmp_u64);
    printf("{\"period_ns\": %llu, \"elapsed_ns\": %llu, \"cpu_ns\": %llu, \"cpu_share\": %.6f, "
           "\"fifo\": %s, \"children\": %d, \"periods\": %llu, \"boundary_wakes\": %zu, \"wakeups\": %llu, "
           "\"signals\": %llu, \"interrupted\": %s, "
           "\"lateness_p50_ns\": %llu, \"lateness_p99_ns\": %llu, \"lateness_max_ns\": %llu, "
           "\"lateness_mean_ns\": %.1f, "
           "\"reaction_p50_ns\": %llu, \"reaction_p99_ns\": %llu, "
           "\"stop_call_p50_ns\": %llu, \"stop_call_p99_ns\": %llu, \"child_pids\": [",
           (unsigned long long)period, (unsigned long long)elapsed, (unsigned long long)cpu,
           (double)cpu / (double)elapsed, fifo_ok ? "true" : "false", nchildren,
           (unsigned long long)periods, nlate, (unsigned long long)wakeups, (unsigned long long)signals,
           interrupted ? "true" : "false", (unsigned long long)pct(late, nlate, 50),
           (unsigned long long)pct(late, nlate, 99), (unsigned long long)(nlate ? late[nlate - 1] : 0),
           mean(late, nlate), (unsigned long long)pct(react, nreact, 50),
           (unsigned long long)pct(react, nreact, 99), (unsigned long long)pct(stopcall, nreact, 50),
           (unsigned long long)pct(stopcall, nreact, 99));
    for (int i = 0; i < nchildren; i++) printf("%s%d", i ? ", " : "", (int)kids[i]);
    printf("]}\n");
    return 0;
}

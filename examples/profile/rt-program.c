/* A small periodic real-time program for `criticore profile` and
 * `criticore regulate --mode monitor`: the shape of a MiBench-like job
 * (blin-bandwidth-monitor §4.1) in four phases of fixed work, marked through
 * the tiny phase/job API of include/criticore.h.
 *
 *   cc -O2 -Iinclude examples/profile/rt-program.c -o rt-program
 *   ./rt-program [JOBS [PERIOD_US]]        (defaults: 1000 jobs, 25000 us)
 *
 * A job walks an 8 MiB buffer (four times this machine's 2 MiB L2, so its
 * lines come from the shared L3 or DRAM, where loads on other cores compete)
 * in random line order, 10 lines per iteration with a phase's share of reads,
 * then a delay loop, as the load microbenchmark does (§3.1, Fig. 4). The work
 * is fixed in lines and iterations, not in time, so a job under load takes
 * longer by exactly the interference. It counts the lines it touches on the
 * counter page. SIGTERM ends the program after the current job.
 */
#include "criticore.h" /* first: under -std=c11 it asks libc for POSIX */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LINE 64
#define BUFFER_BYTES (8u << 20)
#define LINES (BUFFER_BYTES / LINE)

struct phase {
    uint32_t iterations; /* of 10 lines */
    uint32_t reads;      /* of the 10 */
    uint32_t delay;      /* delay-loop rounds after each iteration */
};

/* Read-mostly with some compute; write-heavy and memory-bound (suffers most
 * from contention, like susan's second phase in Fig. 6); compute-bound;
 * mixed. */
static const struct phase PHASES[] = {
    {16000, 8, 60},
    {40000, 2, 0},
    {2400, 9, 2000},
    {16000, 6, 30},
};
#define NPHASES (sizeof PHASES / sizeof PHASES[0])

static volatile sig_atomic_t stopping = 0;
static void on_term(int sig) {
    (void)sig;
    stopping = 1;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t) {
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0 && !stopping) {
    }
}

int main(int argc, char **argv) {
    long jobs = argc > 1 ? atol(argv[1]) : 1000;
    long period_us = argc > 2 ? atol(argv[2]) : 25000;
    if (jobs <= 0 || period_us <= 0) {
        fprintf(stderr, "usage: %s [JOBS [PERIOD_US]] (both positive)\n", argv[0]);
        return 2;
    }
    if (criticore_attach() != 0) {
        perror("criticore_attach");
        return 1;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    volatile uint64_t *buf = malloc(BUFFER_BYTES);
    if (!buf) {
        perror("malloc");
        return 1;
    }
    for (uint32_t i = 0; i < BUFFER_BYTES / 8; i++)
        buf[i] = i;

    uint64_t x = 0x9E3779B97F4A7C15u; /* xorshift state: the same walk every run */
    volatile uint64_t sink = 0;
    uint64_t release = now_ns();
    for (long j = 0; j < jobs && !stopping; j++) {
        sleep_until(release);
        criticore_job_begin((uint32_t)j);
        for (uint32_t p = 0; p < NPHASES; p++) {
            const struct phase *ph = &PHASES[p];
            criticore_phase(p);
            for (uint32_t it = 0; it < ph->iterations; it++) {
                for (uint32_t k = 0; k < 10; k++) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    volatile uint64_t *line = buf + (x % LINES) * (LINE / 8);
                    if (k < ph->reads)
                        sink += *line;
                    else
                        *line = x;
                }
                for (uint32_t d = 0; d < ph->delay; d++)
                    sink += d;
            }
            criticore_count((uint64_t)ph->iterations * ph->reads, (uint64_t)ph->iterations * (10 - ph->reads));
        }
        criticore_job_end((uint32_t)j);
        release += (uint64_t)period_us * 1000u;
    }
    (void)sink;
    return 0;
}

/*
 * sleeplog: an LD_PRELOAD shim that timestamps every nanosleep() call.
 *
 * Used by benches/load_vs_stressng.py (issue 10) to measure, from outside,
 * how many bytes stress-ng's throttled memrate moves per 1 ms interval.
 * stress-ng paces by running a chunk of its buffer at full speed, then
 * nanosleep()ing until (chunks done) / rate seconds have passed; so each
 * nanosleep entry marks the end of one chunk, and the chunk ran between the
 * previous nanosleep's return and this entry. The shim records, per call,
 * CLOCK_MONOTONIC at entry and at return and the requested sleep, into a
 * file-backed shared mapping (one file per process: $SLEEPLOG.<pid>), so the
 * records survive however the process ends (stress-ng's workers end by
 * SIGALRM + siglongjmp). Cost: two clock reads per call.
 *
 * File layout: uint64 count at offset 0, records of 3 x uint64
 * (entry_ns, exit_ns, requested_ns) from offset 64.
 *
 * Build: cc -O2 -shared -fPIC -o sleeplog.so sleeplog.c -ldl
 * Use:   SLEEPLOG=/tmp/x LD_PRELOAD=./sleeplog.so stress-ng ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CAPACITY (1u << 20) /* records per process */
#define HEADER 64

static uint64_t *map;
static pid_t owner;
static int (*real_nanosleep)(const struct timespec *, struct timespec *);

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void open_log(void) {
    const char *base = getenv("SLEEPLOG");
    map = NULL;
    owner = getpid();
    if (!base) return;
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", base, (int)owner);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    size_t size = HEADER + (size_t)CAPACITY * 3 * sizeof(uint64_t);
    if (ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        return;
    }
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m != MAP_FAILED) map = m;
}

int nanosleep(const struct timespec *req, struct timespec *rem) {
    if (!real_nanosleep) real_nanosleep = (int (*)(const struct timespec *, struct timespec *))dlsym(RTLD_NEXT, "nanosleep");
    /* A forked child gets its own file (the parent's mapping is shared). */
    if (getpid() != owner) open_log();
    uint64_t entry = now_ns();
    int r = real_nanosleep(req, rem);
    uint64_t exit = now_ns();
    if (map) {
        uint64_t n = map[0];
        if (n < CAPACITY) {
            uint64_t *rec = map + HEADER / sizeof(uint64_t) + 3 * n;
            rec[0] = entry;
            rec[1] = exit;
            rec[2] = req ? (uint64_t)req->tv_sec * 1000000000ull + (uint64_t)req->tv_nsec : 0;
            __atomic_store_n(&map[0], n + 1, __ATOMIC_RELEASE);
        }
    }
    return r;
}

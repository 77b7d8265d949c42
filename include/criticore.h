/* criticore.h: count a program's own memory accesses and mark its jobs and
 * phases, for criticore's runtime (`criticore regulate`, `criticore profile`)
 * on machines without a hardware PMU. Header only; C11 (<stdatomic.h>) and
 * POSIX (mmap, sigqueue, clock_gettime); C++11 and later too.
 *
 * The runtime gives each program a shared-memory counter page and names it in
 * the environment variable CRITICORE_COUNTER. The page is "counter_page.rs
 * layout v1" (crates/criticore-rt/src/os/counter_page.rs): this header mirrors
 * that layout byte for byte and its protocol call for call (the static
 * asserts below pin the offsets), so change both together.
 *
 *     #include "criticore.h"
 *     criticore_attach();                  // no-op unless run under criticore
 *     for (uint32_t j = 0; ; j++) {
 *         criticore_job_begin(j);
 *         work();                          // touched about 4,000 cache lines
 *         criticore_count(3000, 1000);     // lines read, lines written
 *         criticore_job_end(j);
 *     }
 *
 * Without CRITICORE_COUNTER every call does nothing, so an instrumented
 * program runs unchanged anywhere.
 *
 * Common start (the regulator's time 0, as `criticore load` takes part in it):
 *
 *     criticore_attach_waiting();          // attach; the run waits for our set-up
 *     set_up();                            // buffers, warm-up: unregulated
 *     uint64_t t0 = criticore_wait_start(); // CLOCK_MONOTONIC ns of time 0
 *     for (uint32_t j = 0; ; j++) {        // job j released at t0 + offset + j * period
 *         sleep_until(t0 + offset + j * period);
 *         criticore_job_begin(j); ... criticore_job_end(j);
 *     }
 *
 * Numbering jobs from 0 at time 0 as the file's releases lets MCTI mode see
 * which job a process runs (docs/runtime.md, "MCTI at run time").
 *
 * The attached page is kept per translation unit (a static pointer): call
 * criticore_attach() in each source file that counts, once, before other
 * threads use it. After that every call is thread-safe (atomics only), does
 * not allocate, and keeps errno.
 *
 * Under a strict ISO mode (-std=c11) include this header first, or define
 * _POSIX_C_SOURCE=200809L, so that libc declares sigqueue and clock_gettime.
 */
#ifndef CRITICORE_H
#define CRITICORE_H

#if defined(__STRICT_ANSI__) && !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && \
    !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
/* Strict mode hides all of POSIX; asking for it here only adds declarations.
 * (Not in the default gnu modes: there it would hide the BSD/GNU extras.) */
#ifdef __GLIBC__ /* too late: a libc header came first and fixed the features */
#error "criticore.h needs POSIX under -std=c11: include it first, or define _POSIX_C_SOURCE=200809L"
#endif
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One spelling of the atomics for C (<stdatomic.h>) and C++ (<atomic>, whose
 * std::atomic<T> has the same size and alignment as C's _Atomic(T)). */
#ifdef __cplusplus
#include <atomic>
#define CRITICORE_ATOMIC(T) std::atomic<T>
#define CRITICORE_A(op) std::atomic_##op
#define CRITICORE_MO(o) std::memory_order_##o
#define CRITICORE_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#include <stdatomic.h>
#define CRITICORE_ATOMIC(T) _Atomic(T)
#define CRITICORE_A(op) atomic_##op
#define CRITICORE_MO(o) memory_order_##o
#define CRITICORE_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* The page is shared between processes: the atomics must be lock-free
 * (address-free), as Rust's AtomicU64/AtomicU32 are. */
#if ATOMIC_LLONG_LOCK_FREE != 2 || ATOMIC_INT_LOCK_FREE != 2
#error "criticore.h needs lock-free 32- and 64-bit atomics"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define CRITICORE_MAGIC 0x43525443u /* "CRTC" */
#define CRITICORE_VERSION 1u
#define CRITICORE_PAGE_BYTES 4096
#define CRITICORE_RING 128
#define CRITICORE_ENV "CRITICORE_COUNTER"
#define CRITICORE_OFF UINT64_MAX            /* notify_at: disarmed */
#define CRITICORE_FLAG_NOTIFY_JOB_END 1u    /* flags bit 0 */
#define CRITICORE_EVENT_JOB_BEGIN 1u
#define CRITICORE_EVENT_JOB_END 2u
#define CRITICORE_EVENT_PHASE 3u

/* One ring slot (24 bytes). seq is index + 1 once the slot is complete and 0
 * while it is being written, so a reader never takes a half-written event. */
struct criticore_event {
    CRITICORE_ATOMIC(uint64_t) seq;
    CRITICORE_ATOMIC(uint64_t) t_ns; /* CLOCK_MONOTONIC */
    CRITICORE_ATOMIC(uint32_t) kind; /* CRITICORE_EVENT_* */
    CRITICORE_ATOMIC(uint32_t) arg;  /* job number or phase index */
};

/* counter_page.rs layout v1. */
struct criticore_page {
    CRITICORE_ATOMIC(uint32_t) magic;
    CRITICORE_ATOMIC(uint32_t) version;
    CRITICORE_ATOMIC(uint64_t) reads;         /* cache lines read, cumulative */
    CRITICORE_ATOMIC(uint64_t) writes;        /* cache lines written, cumulative */
    CRITICORE_ATOMIC(uint64_t) notify_at;     /* signal when reads + writes >= this */
    CRITICORE_ATOMIC(int32_t) notify_pid;     /* the reader (0 = nobody) */
    CRITICORE_ATOMIC(int32_t) notify_sig;     /* a real-time signal */
    CRITICORE_ATOMIC(uint64_t) notify_cookie; /* the reader's id of this page */
    CRITICORE_ATOMIC(int32_t) writer_pid;     /* the program that attached last */
    CRITICORE_ATOMIC(uint32_t) flags;         /* CRITICORE_FLAG_* */
    CRITICORE_ATOMIC(uint64_t) event_head;    /* events written so far */
    struct criticore_event ring[CRITICORE_RING]; /* slot = index % 128 */
    CRITICORE_ATOMIC(uint64_t) origin_ns;     /* common start: the reader's time 0 (0 = held, UINT64_MAX = none) */
    CRITICORE_ATOMIC(uint64_t) ready_ns;      /* common start: 0 = not taking part, 1 = setting up, else ready since */
    CRITICORE_ATOMIC(uint64_t) crossed_ns;    /* when the count crossed notify_at (0 = not yet) */
};

#define CRITICORE_AT(field, off) \
    CRITICORE_STATIC_ASSERT(offsetof(struct criticore_page, field) == (off), "counter_page.rs layout v1: " #field)
CRITICORE_AT(magic, 0);
CRITICORE_AT(version, 4);
CRITICORE_AT(reads, 8);
CRITICORE_AT(writes, 16);
CRITICORE_AT(notify_at, 24);
CRITICORE_AT(notify_pid, 32);
CRITICORE_AT(notify_sig, 36);
CRITICORE_AT(notify_cookie, 40);
CRITICORE_AT(writer_pid, 48);
CRITICORE_AT(flags, 52);
CRITICORE_AT(event_head, 56);
CRITICORE_AT(ring, 64);
CRITICORE_AT(origin_ns, 64 + CRITICORE_RING * 24);
CRITICORE_AT(ready_ns, 72 + CRITICORE_RING * 24);
CRITICORE_AT(crossed_ns, 80 + CRITICORE_RING * 24);
#undef CRITICORE_AT
CRITICORE_STATIC_ASSERT(offsetof(struct criticore_event, t_ns) == 8, "counter_page.rs layout v1: event t_ns");
CRITICORE_STATIC_ASSERT(offsetof(struct criticore_event, kind) == 16, "counter_page.rs layout v1: event kind");
CRITICORE_STATIC_ASSERT(offsetof(struct criticore_event, arg) == 20, "counter_page.rs layout v1: event arg");
CRITICORE_STATIC_ASSERT(sizeof(struct criticore_event) == 24, "counter_page.rs layout v1: event size");
CRITICORE_STATIC_ASSERT(sizeof(struct criticore_page) == 88 + CRITICORE_RING * 24, "counter_page.rs layout v1: size");
CRITICORE_STATIC_ASSERT(sizeof(struct criticore_page) <= CRITICORE_PAGE_BYTES, "counter_page.rs layout v1: fits a page");

/* This translation unit's page; NULL when not attached (every call a no-op). */
static struct criticore_page *criticore_page_ = NULL;

/* Map the page named by CRITICORE_COUNTER and record this process as its
 * writer. Returns 0 when attached or when the variable is unset (then nothing
 * is attached), -1 with errno on an error: EINVAL when the file is not a
 * counter page of version 1, or what open/fstat/mmap said. */
static inline int criticore_attach(void) {
    if (criticore_page_ != NULL) return 0;
    const char *path = getenv(CRITICORE_ENV);
    if (path == NULL) return 0;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (st.st_size < CRITICORE_PAGE_BYTES) { /* mapping past the end would SIGBUS */
        close(fd);
        errno = EINVAL;
        return -1;
    }
    void *m = mmap(NULL, CRITICORE_PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd); /* the mapping stays */
    if (m == MAP_FAILED) {
        errno = e;
        return -1;
    }
    struct criticore_page *p = (struct criticore_page *)m;
    /* Acquire pairs with the creator's release of magic (written last). */
    if (CRITICORE_A(load_explicit)(&p->magic, CRITICORE_MO(acquire)) != CRITICORE_MAGIC ||
        CRITICORE_A(load_explicit)(&p->version, CRITICORE_MO(relaxed)) != CRITICORE_VERSION) {
        munmap(m, CRITICORE_PAGE_BYTES);
        errno = EINVAL;
        return -1;
    }
    /* As CounterPage::from_env: the attaching process is the writer. */
    CRITICORE_A(store_explicit)(&p->writer_pid, (int32_t)getpid(), CRITICORE_MO(relaxed));
    criticore_page_ = p;
    return 0;
}

/* As criticore_attach, and say this program takes part in the common start:
 * the runtime launches no other program and starts no regulation until this
 * one calls criticore_wait_start (CounterPage::from_env_waiting). */
static inline int criticore_attach_waiting(void) {
    if (criticore_page_ != NULL) return 0;
    int r = criticore_attach();
    struct criticore_page *p = criticore_page_;
    if (r == 0 && p != NULL && CRITICORE_A(load_explicit)(&p->origin_ns, CRITICORE_MO(acquire)) != CRITICORE_OFF) {
        CRITICORE_A(store_explicit)(&p->ready_ns, (uint64_t)1, CRITICORE_MO(relaxed));
        /* Release: a reader that sees the writer also sees that it will wait. */
        CRITICORE_A(store_explicit)(&p->writer_pid, (int32_t)getpid(), CRITICORE_MO(release));
    }
    return r;
}

static inline uint64_t criticore_now_(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Set up: wait for the common start and return time 0 (CLOCK_MONOTONIC ns),
 * the first release of every program that takes part. Returns now at once
 * when not attached or when the run holds no start; gives up and returns
 * now when the launcher ends or after 120 s (CounterPage::wait_start). */
static inline uint64_t criticore_wait_start(void) {
    struct criticore_page *p = criticore_page_;
    uint64_t t0 = criticore_now_();
    if (p == NULL || CRITICORE_A(load_explicit)(&p->origin_ns, CRITICORE_MO(acquire)) == CRITICORE_OFF) return t0;
    pid_t parent = getppid();
    CRITICORE_A(store_explicit)(&p->ready_ns, t0 > 2 ? t0 : 2, CRITICORE_MO(release));
    for (;;) {
        uint64_t origin = CRITICORE_A(load_explicit)(&p->origin_ns, CRITICORE_MO(acquire));
        if (origin == CRITICORE_OFF) return criticore_now_();
        if (origin != 0) return origin;
        if (criticore_now_() - t0 > 120000000000u || getppid() != parent) return criticore_now_();
        struct timespec pause = {0, 200000}; /* 200 µs, as the Rust side */
        int e = errno;
        nanosleep(&pause, NULL);
        errno = e;
    }
}

/* Nonzero when this translation unit is attached to a page. */
static inline int criticore_attached(void) { return criticore_page_ != NULL; }

/* Send the reader its real-time signal, value cookie << 1 | bit (bit 0: the
 * threshold was crossed, bit 1: a job ended). Keeps errno: sigqueue fails
 * (ESRCH) once the reader is gone, which is no concern of the program's. */
static inline void criticore_signal_(struct criticore_page *p, uintptr_t bit) {
    /* Acquire pairs with set_notify's release of the pid (written last). */
    int32_t pid = CRITICORE_A(load_explicit)(&p->notify_pid, CRITICORE_MO(acquire));
    int32_t sig = CRITICORE_A(load_explicit)(&p->notify_sig, CRITICORE_MO(relaxed));
    if (pid <= 0 || sig <= 0) return;
    uintptr_t cookie = (uintptr_t)CRITICORE_A(load_explicit)(&p->notify_cookie, CRITICORE_MO(relaxed));
    union sigval value;
    value.sival_ptr = (void *)((cookie << 1) | bit);
    int e = errno;
    sigqueue((pid_t)pid, sig, value);
    errno = e;
}

/* Add cache lines read and written; signal the reader, once, when reads +
 * writes reach its armed threshold (CounterPage::count). */
static inline void criticore_count(uint64_t reads, uint64_t writes) {
    struct criticore_page *p = criticore_page_;
    if (p == NULL) return;
    /* seq_cst pairs with the reader's arm(): either we see its new threshold
     * or it sees our count. */
    uint64_t r = reads > 0 ? CRITICORE_A(fetch_add_explicit)(&p->reads, reads, CRITICORE_MO(seq_cst)) + reads
                           : CRITICORE_A(load_explicit)(&p->reads, CRITICORE_MO(seq_cst));
    uint64_t w = writes > 0 ? CRITICORE_A(fetch_add_explicit)(&p->writes, writes, CRITICORE_MO(seq_cst)) + writes
                            : CRITICORE_A(load_explicit)(&p->writes, CRITICORE_MO(seq_cst));
    uint64_t at = CRITICORE_A(load_explicit)(&p->notify_at, CRITICORE_MO(seq_cst));
    if (r + w >= at) {
        /* Only one crossing signals: whoever swaps the threshold off. */
        uint64_t expected = at;
        if (CRITICORE_A(compare_exchange_strong_explicit)(&p->notify_at, &expected, (uint64_t)CRITICORE_OFF,
                                                          CRITICORE_MO(acq_rel), CRITICORE_MO(relaxed))) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            /* When the budget was crossed: the reader's end-to-end reaction starts here. */
            CRITICORE_A(store_explicit)(&p->crossed_ns, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                                        CRITICORE_MO(release));
            criticore_signal_(p, 0);
        }
    }
}

/* Append an event to the ring (CounterPage::mark_at). */
static inline void criticore_mark_(uint32_t kind, uint32_t arg) {
    struct criticore_page *p = criticore_page_;
    if (p == NULL) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    uint64_t index = CRITICORE_A(fetch_add_explicit)(&p->event_head, (uint64_t)1, CRITICORE_MO(acq_rel));
    struct criticore_event *s = &p->ring[index % CRITICORE_RING];
    CRITICORE_A(store_explicit)(&s->seq, (uint64_t)0, CRITICORE_MO(release));
    /* seqlock: seq = 0 visible before the new fields on weakly ordered CPUs */
    CRITICORE_A(thread_fence)(CRITICORE_MO(release));
    CRITICORE_A(store_explicit)(&s->t_ns, t_ns, CRITICORE_MO(relaxed));
    CRITICORE_A(store_explicit)(&s->kind, kind, CRITICORE_MO(relaxed));
    CRITICORE_A(store_explicit)(&s->arg, arg, CRITICORE_MO(relaxed));
    CRITICORE_A(store_explicit)(&s->seq, index + 1, CRITICORE_MO(release));
    if (kind == CRITICORE_EVENT_JOB_END &&
        (CRITICORE_A(load_explicit)(&p->flags, CRITICORE_MO(relaxed)) & CRITICORE_FLAG_NOTIFY_JOB_END))
        criticore_signal_(p, 1);
}

/* Job `job` (one activation of the real-time task) starts now. */
static inline void criticore_job_begin(uint32_t job) { criticore_mark_(CRITICORE_EVENT_JOB_BEGIN, job); }

/* Job `job` ends now; signals the reader if it asked for job ends. */
static inline void criticore_job_end(uint32_t job) { criticore_mark_(CRITICORE_EVENT_JOB_END, job); }

/* The program enters memory phase `index` now. */
static inline void criticore_phase(uint32_t index) { criticore_mark_(CRITICORE_EVENT_PHASE, index); }

#ifdef __cplusplus
}
#endif

#endif /* CRITICORE_H */

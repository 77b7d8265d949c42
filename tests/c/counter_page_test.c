/* Drives include/criticore.h for crates/criticore-rt/tests/c_header.rs, which
 * compiles it (as C11, and as C++11 to check the header there too), runs it
 * against a page made by the Rust side and checks the page and the signals.
 * Written in the common subset of C and C++.
 *
 *   counter_page_test layout      print the layout: "<field> <offset> <size>",
 *                                 then the constants
 *   counter_page_test STEP...     attach, print "attach <rc> <errno> <attached>",
 *                                 run the steps in order, print "done"
 *
 * Steps: count:R:W  begin:J  end:J  phase:I  phases:N (phase 0..N-1)
 *        waiting (first: attach with criticore_attach_waiting instead)
 *        start (criticore_wait_start; print "start <time 0>")
 *        threads:N:K (N threads each count one line read K times, at once)
 *        race:R:N (R rounds: arm 100 lines on, as the reader's arm() does,
 *                  then N threads count 1,000 lines each; R signals expected)
 */
#include "criticore.h" /* first: under -std=c11 it asks libc for POSIX */

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define FIELD(s, f) printf("%s %u %u\n", #f, (unsigned)offsetof(struct s, f), (unsigned)sizeof(((struct s *)0)->f))

static void layout(void) {
    FIELD(criticore_page, magic);
    FIELD(criticore_page, version);
    FIELD(criticore_page, reads);
    FIELD(criticore_page, writes);
    FIELD(criticore_page, notify_at);
    FIELD(criticore_page, notify_pid);
    FIELD(criticore_page, notify_sig);
    FIELD(criticore_page, notify_cookie);
    FIELD(criticore_page, writer_pid);
    FIELD(criticore_page, flags);
    FIELD(criticore_page, event_head);
    FIELD(criticore_page, ring);
    FIELD(criticore_page, origin_ns);
    FIELD(criticore_page, ready_ns);
    FIELD(criticore_page, crossed_ns);
    FIELD(criticore_event, seq);
    FIELD(criticore_event, t_ns);
    FIELD(criticore_event, kind);
    FIELD(criticore_event, arg);
    printf("sizeof_event %u\n", (unsigned)sizeof(struct criticore_event));
    printf("sizeof_page %u\n", (unsigned)sizeof(struct criticore_page));
    printf("MAGIC %llu\n", (unsigned long long)CRITICORE_MAGIC);
    printf("VERSION %llu\n", (unsigned long long)CRITICORE_VERSION);
    printf("PAGE_BYTES %llu\n", (unsigned long long)CRITICORE_PAGE_BYTES);
    printf("RING %llu\n", (unsigned long long)CRITICORE_RING);
    printf("OFF %llu\n", (unsigned long long)CRITICORE_OFF);
    printf("FLAG_NOTIFY_JOB_END %llu\n", (unsigned long long)CRITICORE_FLAG_NOTIFY_JOB_END);
    printf("EVENT_JOB_BEGIN %llu\n", (unsigned long long)CRITICORE_EVENT_JOB_BEGIN);
    printf("EVENT_JOB_END %llu\n", (unsigned long long)CRITICORE_EVENT_JOB_END);
    printf("EVENT_PHASE %llu\n", (unsigned long long)CRITICORE_EVENT_PHASE);
    printf("ENV %s\n", CRITICORE_ENV);
}

static unsigned long long per_thread;
static pthread_barrier_t start;

static void *counting_thread(void *unused) {
    (void)unused;
    pthread_barrier_wait(&start); /* all start together, to race on the threshold */
    for (unsigned long long i = 0; i < per_thread; i++) criticore_count(1, 0);
    return NULL;
}

static void threads(unsigned n, unsigned long long k) {
    pthread_t t[64];
    if (n == 0 || n > 64) {
        fprintf(stderr, "threads: 1..64\n");
        exit(2);
    }
    per_thread = k;
    pthread_barrier_init(&start, NULL, n);
    for (unsigned i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, counting_thread, NULL) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    for (unsigned i = 0; i < n; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
}

/* Repeat the race for the threshold: several threads cross it at once, and
 * only the one whose compare-exchange turns it off may signal. */
static void race(unsigned long long rounds, unsigned n) {
    struct criticore_page *p = criticore_page_;
    if (p == NULL) return;
    for (unsigned long long i = 0; i < rounds; i++) {
        uint64_t total = CRITICORE_A(load_explicit)(&p->reads, CRITICORE_MO(seq_cst)) +
                         CRITICORE_A(load_explicit)(&p->writes, CRITICORE_MO(seq_cst));
        CRITICORE_A(store_explicit)(&p->notify_at, total + 100, CRITICORE_MO(seq_cst));
        threads(n, 1000);
    }
}

static int step(const char *s) {
    unsigned long long a = 0, b = 0;
    char name[16];
    int n = sscanf(s, "%15[a-z]:%llu:%llu", name, &a, &b);
    if (n == 3 && strcmp(name, "count") == 0) criticore_count(a, b);
    else if (n == 2 && strcmp(name, "begin") == 0) criticore_job_begin((uint32_t)a);
    else if (n == 2 && strcmp(name, "end") == 0) criticore_job_end((uint32_t)a);
    else if (n == 2 && strcmp(name, "phase") == 0) criticore_phase((uint32_t)a);
    else if (n == 2 && strcmp(name, "phases") == 0)
        for (unsigned long long i = 0; i < a; i++) criticore_phase((uint32_t)i);
    else if (n == 3 && strcmp(name, "threads") == 0) threads((unsigned)a, b);
    else if (n == 3 && strcmp(name, "race") == 0) race(a, (unsigned)b);
    else if (n == 1 && strcmp(name, "waiting") == 0) {
    } else if (n == 1 && strcmp(name, "start") == 0) {
        uint64_t t0 = criticore_wait_start();
        int e = errno;
        printf("start %llu\n", (unsigned long long)t0);
        fflush(stdout);
        errno = e;
    } else return -1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "layout") == 0) {
        layout();
        return 0;
    }
    errno = 0;
    int rc = argc > 1 && strcmp(argv[1], "waiting") == 0 ? criticore_attach_waiting() : criticore_attach();
    int e = rc == 0 ? 0 : errno;
    printf("attach %d %d %d\n", rc, e, criticore_attached());
    /* Attaching again is harmless and keeps the page. */
    if (criticore_attached() && (criticore_attach() != 0 || !criticore_attached())) {
        fprintf(stderr, "a second attach changed the state\n");
        return 2;
    }
    errno = 0; /* stdio may have set it (ENOTTY) */
    for (int i = 1; i < argc; i++)
        if (step(argv[i]) != 0) {
            fprintf(stderr, "bad step %s\n", argv[i]);
            return 2;
        }
    /* The calls keep errno (a failed sigqueue must not leak into the program). */
    if (errno != 0) {
        fprintf(stderr, "errno changed to %d\n", errno);
        return 2;
    }
    printf("done\n");
    return 0;
}

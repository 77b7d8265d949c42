// Benchmark driver for SchedCAT's native global-EDF simulator (issue 13).
// Our code; it only includes SchedCAT's headers and links its
// schedule_sim.cpp and tasks.cpp, built by build.sh from a SchedCAT checkout.
//
//   driver FILE REPEATS
//
// FILE holds task systems back to back, integer times in one unit (ns):
//   cores horizon n
//   wcet period deadline      (n lines)
// For every system it prints one JSON line: completed jobs (finish <= horizon),
// deadline misses (criticore's definition: finished late, or unfinished with
// deadline <= horizon) and, per repeat, wall seconds of the simulation alone
// and including construction (TaskSet, job sequences, scheduler) and teardown.
//
// SchedCAT's overload semantics (schedule_sim.h/.cpp): a task has one job
// object (PeriodicJobSequence); at completion init_next() moves its release one
// period on, and add_release() makes it ready at once if that release has
// passed. So a task's jobs run strictly in order, a late job's successor
// becomes ready when it finishes but keeps deadline = nominal release + D,
// nothing is skipped or aborted, and the backlog is unbounded. criticore's
// G-EDF does the same (jobs wait behind their task's running job), so the
// counts must agree even when overloaded.

#include "tasks.h"
#include "schedule_sim.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <vector>

typedef GlobalScheduler<EarliestDeadlineFirst> GedfSim;

// Counts as SchedCAT's own Tardiness (edf/sim.cpp) does, bounded by the horizon:
// SchedCAT's simulate_until processes one event step past the horizon.
class Counter : public GedfSim
{
  public:
    const Task* first;
    simtime_t horizon;
    unsigned long completed = 0, tardy = 0;
    // Per task: release of its first job still unfinished at the horizon.
    std::vector<simtime_t> unfinished_from;

    Counter(int m, const Task* first, size_t n, simtime_t horizon)
        : GedfSim(m), first(first), horizon(horizon), unfinished_from(n, ~0UL) {}

    void job_completed(int, Job* job) override
    {
        simtime_t now = get_current_time();
        if (now <= horizon) {
            completed++;
            if (now > job->get_deadline())
                tardy++;
        } else {
            simtime_t& u = unfinished_from[&job->get_task() - first];
            if (job->get_release() < u)
                u = job->get_release();
        }
    }
};

struct Result { unsigned long jobs, misses; double sim_s, total_s; };

static Result run(int m, simtime_t horizon, const std::vector<Task>& spec)
{
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    TaskSet ts;
    for (const Task& t : spec)
        ts.add_task(t.get_wcet(), t.get_period(), t.get_deadline());
    size_t n = ts.get_task_count();
    Counter sim(m, &ts[0], n, horizon);
    // As SchedCAT's run_periodic_simulation, with the simulation timed apart.
    std::vector<PeriodicJobSequence*> jobs(n);
    for (size_t i = 0; i < n; i++) {
        jobs[i] = new PeriodicJobSequence(ts[i]);
        jobs[i]->set_simulation(&sim);
        sim.add_release(jobs[i]);
    }
    auto t1 = clock::now();
    sim.simulate_until(horizon);
    auto t2 = clock::now();
    // Jobs unfinished at the horizon whose deadline is at or before it. A
    // sequence's release is its oldest unfinished job's (jobs of a task run in order).
    unsigned long unfinished_missed = 0;
    for (size_t i = 0; i < n; i++) {
        simtime_t r = sim.unfinished_from[i];
        if (r == ~0UL)
            r = jobs[i]->get_release();
        const Task& t = ts[i];
        for (; r < horizon && r + t.get_deadline() <= horizon; r += t.get_period())
            unfinished_missed++;
    }
    for (auto* j : jobs)
        delete j;
    auto t3 = clock::now();
    std::chrono::duration<double> sim_s = t2 - t1, total_s = t3 - t0;
    return {sim.completed, sim.tardy + unfinished_missed, sim_s.count(), total_s.count()};
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s FILE REPEATS\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    int repeats = atoi(argv[2]);
    int m;
    unsigned long horizon, n;
    while (in >> m >> horizon >> n) {
        std::vector<Task> spec(n);
        for (auto& t : spec) {
            unsigned long e, p, d;
            in >> e >> p >> d;
            t.init(e, p, d);
        }
        Result first{};
        printf("{\"cores\": %d, \"tasks\": %lu, \"horizon\": %lu, \"sim_s\": [", m, n, horizon);
        std::vector<double> totals;
        for (int k = 0; k < repeats; k++) {
            Result r = run(m, horizon, spec);
            if (k == 0)
                first = r;
            else if (r.jobs != first.jobs || r.misses != first.misses)
                return 1;  // must be deterministic
            printf("%s%.9f", k ? ", " : "", r.sim_s);
            totals.push_back(r.total_s);
        }
        printf("], \"total_s\": [");
        for (size_t k = 0; k < totals.size(); k++)
            printf("%s%.9f", k ? ", " : "", totals[k]);
        printf("], \"jobs\": %lu, \"deadline_misses\": %lu}\n", first.jobs, first.misses);
        fflush(stdout);
    }
    return 0;
}

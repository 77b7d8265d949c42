//! launch(): affinity and SCHED_FIFO read back from the kernel, the effect of
//! PDEATHSIG = SIGCONT, environment and output files, one-line errors; and
//! SCHED_DEADLINE through deadline.rs: set and read back, parameter checks
//! before the syscall, EBUSY and EPERM explained.
//! Tests that take SCHED_DEADLINE bandwidth run one at a time (DL_LOCK).
//! A test whose needs (SCHED_FIFO, SCHED_DEADLINE, 2 CPUs) this machine does
//! not meet is counted as ignored, with the reason (throttle_common `run`).

mod throttle_common;

use std::time::Duration;

use criticore_rt::os::deadline::{self, admission_limit, get_affinity, get_deadline, get_policy, set_deadline, DeadlineErrorKind, SCHED_DEADLINE};
use criticore_rt::os::launch::{launch, LaunchSpec, Launched, Output, Policy};
use throttle_common::*;

fn main() {
    run(vec![
        test("affinity_and_fifo_are_applied", affinity_and_fifo_are_applied).needs(sched_fifo),
        test("default_spec_inherits", default_spec_inherits),
        test("env_and_output_file", env_and_output_file),
        test("pdeathsig_resumes_a_stopped_child_when_the_launching_thread_exits", pdeathsig_resumes_a_stopped_child_when_the_launching_thread_exits),
        test("one_line_errors", one_line_errors),
        test("own_group_leads_its_process_group_and_ends_with_it", own_group_leads_its_process_group_and_ends_with_it),
        test("deadline_on_a_sleeping_child", deadline_on_a_sleeping_child).needs(sched_deadline),
        test("launch_with_deadline_policy", launch_with_deadline_policy).needs(sched_deadline),
        test("invalid_parameters_are_caught_before_the_syscall", invalid_parameters_are_caught_before_the_syscall),
        test("admission_refusal_is_explained", admission_refusal_is_explained).needs(sched_deadline).needs(deadline_limit),
        test("narrowed_affinity_is_explained", narrowed_affinity_is_explained).needs(two_cpus).needs(sched_deadline),
    ])
}

/// Kills and reaps a launched child on drop (SIGCONT first in case it is stopped).
#[derive(Debug)]
struct Guard(Launched);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.signal(libc::SIGCONT);
        let _ = self.0.signal(libc::SIGKILL);
        if wait_exit(&self.0.pidfd, WAIT) {
            let _ = self.0.child.wait();
        }
    }
}

/// Issue 25: a task's children end with it. A command launched with
/// `own_group` leads a process group (pgrp = its pid, not ours), its stdin is
/// /dev/null, and `end_groups` ends it and the two sleeps it started.
fn own_group_leads_its_process_group_and_ends_with_it() {
    use criticore_rt::os::procs::{end_groups, group_members, stat};
    let mut spec = LaunchSpec::new(["sh", "-c", "sleep 60 & sleep 60 & wait"]);
    spec.own_group = true;
    let mut g = Guard(launch(&spec).unwrap());
    let pid = g.0.pid;
    // Independently from /proc: its group is its own, ours is another.
    let ours = stat(std::process::id() as i32).unwrap().pgrp;
    assert_eq!(stat(pid).unwrap().pgrp, pid);
    assert_ne!(ours, pid);
    assert_eq!(g.0.start, stat(pid).unwrap().start);
    assert_eq!(std::fs::read_link(format!("/proc/{pid}/fd/0")).unwrap(), std::path::PathBuf::from("/dev/null"));
    assert!(wait_until(WAIT, || group_members(pid).len() == 3).is_some(), "members: {:?}", group_members(pid));
    let members = group_members(pid);
    let child = &mut g.0.child;
    let ended = end_groups(&[(pid, g.0.start)], Duration::from_secs(5), &mut || matches!(child.try_wait(), Ok(Some(_))));
    assert_eq!((ended.processes, ended.killed), (3, 0));
    assert!(wait_until(WAIT, || members.iter().all(|&m| stat(m).is_none_or(|s| s.state == 'Z' || s.pgrp != pid))).is_some());
    assert_eq!(group_members(pid), Vec::<i32>::new());
    // A group whose number now names another process (here this test's own,
    // alive, started at another time than the 0 asked for) is not touched.
    // (Not our process group's number: its leader may have exited, depending
    // on how the tests were started, and a group with no leader is ours.)
    assert!(!criticore_rt::os::procs::group_is_ours(std::process::id() as i32, 0));
}

fn sleeper_spec() -> LaunchSpec {
    LaunchSpec::new(["sleep", "60"])
}

fn last_cpu() -> usize {
    *deadline::online_cpus().unwrap().last().unwrap()
}

fn affinity_and_fifo_are_applied() {
    let cpu = last_cpu();
    let mut spec = sleeper_spec();
    spec.cpus = Some(vec![cpu]);
    spec.policy = Policy::Fifo(10);
    let g = Guard(launch(&spec).unwrap());
    assert_eq!(get_affinity(g.0.pid).unwrap(), vec![cpu]);
    assert_eq!(get_policy(g.0.pid).unwrap(), libc::SCHED_FIFO);
    let mut p = libc::sched_param { sched_priority: 0 };
    // SAFETY: reading our child's parameters.
    assert_eq!(unsafe { libc::sched_getparam(g.0.pid, &mut p) }, 0);
    assert_eq!(p.sched_priority, 10);
}

fn default_spec_inherits() {
    let g = Guard(launch(&sleeper_spec()).unwrap());
    assert_eq!(get_policy(g.0.pid).unwrap(), get_policy(0).unwrap());
    assert_eq!(get_affinity(g.0.pid).unwrap(), get_affinity(0).unwrap());
}

fn env_and_output_file() {
    let out = std::env::temp_dir().join(format!("criticore-launch-out-{}", std::process::id()));
    let mut spec = LaunchSpec::new(["sh", "-c", "echo \"$CRITICORE_LAUNCH_TEST\"; echo err >&2"]);
    spec.env = vec![("CRITICORE_LAUNCH_TEST".into(), "hello".into())];
    spec.stdout = Output::File(out.clone());
    spec.stderr = Output::Null;
    let mut l = launch(&spec).unwrap();
    assert!(wait_exit(&l.pidfd, WAIT));
    assert!(l.child.wait().unwrap().success());
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(text, "hello\n");
}

fn pdeathsig_resumes_a_stopped_child_when_the_launching_thread_exits() {
    // docs/references.md, Runtime §2: PDEATHSIG fires when the creating thread exits.
    let handle = std::thread::spawn(|| {
        let g = Guard(launch(&LaunchSpec::new(["sh", "-c", "while :; do :; done"])).unwrap());
        g.0.signal(libc::SIGSTOP).unwrap();
        assert!(wait_state(g.0.pid, WAIT, |c| c == 'T').is_some(), "not stopped");
        g
    });
    let g = handle.join().unwrap();
    // Nobody but the kernel (the parent-death signal) sends SIGCONT here.
    assert!(wait_state(g.0.pid, WAIT, |c| c != 'T').is_some(), "still stopped after its launching thread exited");
}

fn one_line_errors() {
    let e = launch(&LaunchSpec::new(["criticore-no-such-command"])).unwrap_err();
    assert_eq!(e.to_string(), "cannot start `criticore-no-such-command`: command not found");
    let e = launch(&LaunchSpec::new(["/nonexistent/prog"])).unwrap_err();
    assert_eq!(e.to_string(), "cannot start `/nonexistent/prog`: no such file");
    // A file without execute permission (EACCES, even for root).
    let plain = std::env::temp_dir().join(format!("criticore-launch-plain-{}", std::process::id()));
    std::fs::write(&plain, "not a program\n").unwrap();
    let e = launch(&LaunchSpec::new([plain.to_string_lossy()])).map(Guard).unwrap_err();
    let _ = std::fs::remove_file(&plain);
    assert_eq!(e.reason, "permission denied (not executable?)");
    assert!(launch(&LaunchSpec::new(Vec::<String>::new())).unwrap_err().to_string().contains("empty command"));

    let mut spec = sleeper_spec();
    spec.cpus = Some(vec![4000]);
    let e = launch(&spec).unwrap_err().to_string();
    assert!(e.starts_with("cannot start `sleep`: cpu 4000 is not online (online cpus: "), "{e}");

    spec.cpus = None;
    spec.policy = Policy::Fifo(0);
    assert!(launch(&spec).unwrap_err().reason.starts_with("SCHED_FIFO priority 0 is outside 1-99"));

    spec.policy = Policy::Deadline { runtime_ns: 10, deadline_ns: 1_000_000, period_ns: 1_000_000 };
    assert!(launch(&spec).unwrap_err().reason.contains("minimum of 1024"));

    spec.stdout = Output::File("/nonexistent/dir/out".into());
    spec.policy = Policy::Other;
    let e = launch(&spec).unwrap_err().to_string();
    assert!(e.contains("cannot open /nonexistent/dir/out for stdout"), "{e}");
    assert!(!e.contains('\n'));
}

/// `f` until it is not refused by admission control, for up to 2 s: the
/// bandwidth of the tasks `admission_refusal_is_explained` killed comes back
/// at their 0-lag time, later than its 5 ms pause on a busy host.
fn admitted<T, E: std::fmt::Display>(mut f: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let until = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        match f() {
            Err(e) if e.to_string().contains("admission control refused") && std::time::Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            r => return r,
        }
    }
}

fn deadline_on_a_sleeping_child() {
    let _l = DL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let k = Kid::sleeper();
    admitted(|| set_deadline(k.pid, 1_000_000, 100_000_000, 100_000_000, 0)).unwrap();
    assert_eq!(get_policy(k.pid).unwrap(), SCHED_DEADLINE);
    let p = get_deadline(k.pid).unwrap();
    assert_eq!((p.policy, p.runtime_ns, p.deadline_ns, p.period_ns), (SCHED_DEADLINE, 1_000_000, 100_000_000, 100_000_000));
}

fn launch_with_deadline_policy() {
    let _l = DL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut spec = sleeper_spec();
    spec.policy = Policy::Deadline { runtime_ns: 500_000, deadline_ns: 10_000_000, period_ns: 0 };
    let g = Guard(admitted(|| launch(&spec)).unwrap());
    let p = get_deadline(g.0.pid).unwrap();
    assert_eq!((p.policy, p.runtime_ns, p.deadline_ns), (SCHED_DEADLINE, 500_000, 10_000_000));
    assert_eq!(p.flags & deadline::SCHED_FLAG_RESET_ON_FORK, deadline::SCHED_FLAG_RESET_ON_FORK, "so the command may fork");

    if deadline::online_cpus().unwrap().len() > 1 {
        spec.cpus = Some(vec![0]);
        let e = launch(&spec).unwrap_err().to_string();
        assert!(e.contains("cannot be pinned") && e.contains("exclusive cpuset partition"), "{e}");
    }
}

fn invalid_parameters_are_caught_before_the_syscall() {
    let k = Kid::sleeper();
    for (r, d, p, what) in [
        (1000, 1_000_000, 1_000_000, "below the kernel's minimum of 1024 ns"),
        (2_000_000, 1_000_000, 10_000_000, "exceeds the deadline"),
        (1_000_000, 20_000_000, 10_000_000, "exceeds the period"),
        (1_000_000, 1 << 63, 0, "below 2^63"),
    ] {
        let e = set_deadline(k.pid, r, d, p, 0).unwrap_err();
        assert_eq!(e.kind, DeadlineErrorKind::Invalid);
        assert!(e.to_string().starts_with(&format!("SCHED_DEADLINE for pid {}: ", k.pid)) && e.reason.contains(what), "{e}");
        assert_ne!(get_policy(k.pid).unwrap(), SCHED_DEADLINE);
    }
    if let Ok(max) = std::fs::read_to_string("/proc/sys/kernel/sched_deadline_period_max_us") {
        let max_ns: u64 = max.trim().parse::<u64>().unwrap() * 1000;
        let e = set_deadline(k.pid, 1_000_000, max_ns + 1000, 0, 0).unwrap_err();
        assert!(e.reason.contains("sched_deadline_period_max_us"), "{e}");
    }
}

/// More than the limit: tasks at runtime = period (100% of a CPU each) until
/// admission control refuses one; the refusal must be the plain message.
fn admission_refusal_is_explained() {
    let limit = admission_limit().expect("checked by deadline_limit");
    let _l = DL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = deadline::online_cpus().unwrap().len();
    let mut kids = Vec::new();
    let mut refused = None;
    // A 1 ms period: a killed task's bandwidth is released within a period.
    for _ in 0..cpus + 2 {
        let k = Kid::sleeper();
        match set_deadline(k.pid, 1_000_000, 1_000_000, 1_000_000, 0) {
            Ok(()) => kids.push(k),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let e = refused.expect("admission control must refuse more than the CPUs' total");
    eprintln!("{} task(s) at 100% admitted on {cpus} CPU(s); then: {e}", kids.len());
    assert_eq!(e.kind, DeadlineErrorKind::Admission);
    let pct = format!("{}", (limit * 100.0 * 100.0).round() / 100.0);
    assert!(
        e.reason.starts_with(&format!(
            "admission control refused: the total SCHED_DEADLINE bandwidth would exceed the limit of {pct}% per CPU set by \
             /proc/sys/kernel/sched_rt_runtime_us / sched_rt_period_us"
        )),
        "{e}"
    );
    drop(kids);
    std::thread::sleep(Duration::from_millis(5));
}

/// A task pinned to one CPU of several cannot become a DL task (EPERM).
fn narrowed_affinity_is_explained() {
    let _l = DL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut spec = sleeper_spec();
    spec.cpus = Some(vec![0]);
    let g = Guard(launch(&spec).unwrap());
    let e = set_deadline(g.0.pid, 1_000_000, 10_000_000, 10_000_000, 0).unwrap_err();
    assert_eq!(e.kind, DeadlineErrorKind::Permission);
    assert!(e.reason.contains("must cover all CPUs of its root domain") && e.reason.contains("exclusive cpuset partition"), "{e}");
}

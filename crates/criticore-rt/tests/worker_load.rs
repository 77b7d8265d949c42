//! The shipped `criticore-worker load ...`: the generator `criticore regulate`
//! runs in place of `criticore load` (workload/worker.rs). It runs to its
//! duration and prints one summary line; a bad option is one line on stderr
//! and exit 2; SIGTERM ends it cleanly, exit 0 and the summary line, and
//! SIGINT (a Ctrl-C) likewise with exit 130, as the Python command does.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn worker(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_criticore-worker"));
    // Not under a regulator: no counter page to wait for.
    c.args(args).env_remove("CRITICORE_COUNTER").stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// (lines, seconds) of "criticore load: N lines of L B in S s (X GB/s), buffer SIZE".
fn summary(out: &Output, buffer: &str) -> (u64, f64) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "one summary line: {stdout:?}");
    let words: Vec<&str> = stdout.split_whitespace().collect();
    assert_eq!(&words[..2], ["criticore", "load:"], "{stdout:?}");
    assert!(stdout.trim_end().ends_with(&format!("buffer {buffer}")), "{stdout:?}");
    (words[2].parse().unwrap(), words[8].parse().unwrap())
}

#[test]
fn runs_to_its_duration_and_prints_one_line() {
    let out = worker(&["load", "--buffer", "1MiB", "--duration", "50ms"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let (lines, secs) = summary(&out, "1 MiB");
    assert!(lines > 0 && (0.05..1.0).contains(&secs), "{lines} lines in {secs} s");
    // The `=` forms and a buffer that is not whole MiB.
    let out = worker(&["load", "--buffer=512KiB", "-d", "20ms", "-r", "5", "--pattern=random"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    summary(&out, "512 KiB");
}

#[test]
fn a_bad_option_is_one_line_and_exit_2() {
    for args in [&["load", "--buffer", "lots"][..], &["load", "--log", "x.csv"], &["load", "--pattern", "random", "--fresh-pages"]] {
        let out = worker(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: criticore load: --"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn sigterm_and_sigint_end_it_cleanly() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let child = worker(&["load", "--buffer", "1MiB"]).spawn().unwrap();
        // Its handler installed (SigCgt in /proc: the bit of the signal), so
        // the signal asks it to stop rather than killing it; bounded.
        let caught = |pid: u32| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:")).and_then(|m| u64::from_str_radix(m.trim(), 16).ok()).unwrap_or(0);
            mask & (1 << (signal - 1)) != 0
        };
        let waited = (0..1000).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            caught(child.id())
        });
        assert!(waited, "signal {signal}: the handler was never installed");
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let out = child.wait_with_output().unwrap();
        let status = if signal == libc::SIGINT { 130 } else { 0 };
        assert_eq!(out.status.code(), Some(status), "signal {signal}: {out:?}");
        let (lines, _) = summary(&out, "1 MiB");
        assert!(lines > 0);
    }
}

//! The periodic worker without Python: `criticore-worker FILE TASK` runs
//! task TASK of the task-system file FILE as a real periodic process, the
//! same code as `criticore load --file FILE --task TASK` (the engine's PET,
//! [`super::periodic::JobPlan`], sized on this machine and run by
//! [`super::periodic::run`]). `criticore regulate` launches it for a task
//! whose command is exactly that `criticore load`: the file is parsed once
//! per worker, and no interpreter starts before time 0 (docs/runtime.md).
//!
//! Its job records go to `$CRITICORE_JOB_LOG` as CSV (`--compare-sim`).

use super::load::{LoadOptions, LoadReport, LoadSpec, StopOnSignals, STOP};
use super::periodic::{self, JobPlan, JobRecord};
use super::sizing_cache::SizingCache;
use crate::os::counter_page::{now_ns, CounterPage};
use criticore::model::parse::parse_task_system_bytes_with;
use criticore::model::{Format, TaskSystem};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The program's file name, shipped beside the watchdog.
pub const PROGRAM: &str = "criticore-worker";
/// Names the worker program to use instead of searching for it.
pub const PROGRAM_ENV: &str = "CRITICORE_WORKER";

/// The worker program, if shipped: `$CRITICORE_WORKER`, else `_bin/criticore-worker`
/// beside the module holding this code, else beside it.
pub fn locate() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(PROGRAM_ENV) {
        return Some(PathBuf::from(p));
    }
    let dir = crate::os::watchdog::module_path()?.parent()?.to_path_buf();
    [dir.join("_bin").join(PROGRAM), dir.join(PROGRAM)].into_iter().find(|p| p.is_file())
}

/// What the worker can run in place of Python's `criticore load`.
#[derive(Debug, Clone, PartialEq)]
pub enum Native {
    /// Exactly `criticore load --file F --task T` (either order): the periodic task.
    Periodic { file: String, task: String },
    /// `criticore load` with only generator options it runs ([`LoadOptions::from_args`]).
    Load(Vec<String>),
}

/// The command the worker runs in place of `argv`, if it can.
pub fn native_command(argv: &[String]) -> Option<Native> {
    let rest = match argv {
        [c, l, rest @ ..] if c == "criticore" && l == "load" => rest,
        _ => return None,
    };
    match rest {
        [a, x, b, y] if a == "--file" && b == "--task" => Some(Native::Periodic { file: x.clone(), task: y.clone() }),
        [a, y, b, x] if a == "--task" && b == "--file" => Some(Native::Periodic { file: x.clone(), task: y.clone() }),
        _ => LoadOptions::from_args(rest).is_ok().then(|| Native::Load(rest.to_vec())),
    }
}

/// The worker program's command line for `argv`, if it can run it.
pub fn native_argv(argv: &[String], program: &Path) -> Option<Vec<String>> {
    let program = program.display().to_string();
    Some(match native_command(argv)? {
        Native::Periodic { file, task } => vec![program, file, task],
        Native::Load(args) => [vec![program, "load".to_string()], args].concat(),
    })
}

/// Run the generator as `criticore load ARGS` does (pinned, attached to its
/// counter page, until its duration or SIGINT/SIGTERM); its totals. Errors are one line.
pub fn run_load(args: &[String]) -> Result<(LoadReport, LoadSpec), String> {
    let options = LoadOptions::from_args(args).map_err(|e| format!("criticore load: {e}"))?;
    let (spec, page) = options.prepare().map_err(|(field, reason)| format!("criticore load: {field}: {reason}"))?;
    let _guard = StopOnSignals::install();
    let report = super::load::run(&spec, page.as_ref(), &STOP, |_| {}).map_err(|e| format!("criticore load: --buffer: {e}"))?;
    Ok((report, spec))
}

/// A file as the front ends read it: presets named in it are read beside it.
pub fn read_system(file: &str) -> Result<TaskSystem, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let dir = Path::new(file).parent().map(Path::to_path_buf).unwrap_or_default();
    let read = move |preset: &str| std::fs::read_to_string(dir.join(preset)).map_err(|e| format!("cannot read {}: {e}", dir.join(preset).display()));
    parse_task_system_bytes_with(&bytes, Format::from_path(file), file, &read).map_err(|e| e.to_string())
}

/// Run task `task` of `file`; the job records and, per job, when it finished
/// on CLOCK_MONOTONIC. Errors are one line.
pub fn run(file: &str, task: &str) -> Result<(Vec<JobRecord>, Vec<u64>), String> {
    let system = read_system(file)?;
    let index = system.tasks.iter().position(|t| t.name == task).ok_or_else(|| format!("{file}: --task: no task named \"{task}\""))?;
    let plan = JobPlan::of(&system, index).map_err(|e| format!("{file}: {}: {}", e.field, e.reason))?;
    let page = CounterPage::from_env_waiting().transpose().map_err(|e| format!("{file}: CRITICORE_COUNTER: cannot attach the counter page: {e}"))?;
    let _guard = StopOnSignals::install();
    let mut walker = plan.walker().map_err(|e| format!("{file}: task \"{task}\": {e}"))?;
    let (spec, notes) = plan.prepare(&mut walker, None, None, &mut SizingCache::open());
    for n in notes {
        eprintln!("note: {task}: {n}");
    }
    let mut clock = Vec::new();
    let records = periodic::run(&spec, &mut walker, page.as_ref(), &STOP, |_| clock.push(now_ns())).map_err(|e| format!("{file}: task \"{task}\": {e}"))?;
    Ok((records, clock))
}

/// The job records as CSV, in the columns `criticore load --log x.csv` writes
/// that `--compare-sim` reads.
pub fn write_csv(path: &Path, records: &[JobRecord], clock: &[u64]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "job,release_ns,start_ns,finish_ns,deadline_ns,exec_ns,memory_requests,finish_clock_ns")?;
    for (r, c) in records.iter().zip(clock) {
        writeln!(out, "{},{},{},{},{},{},{},{}", r.job, r.release_ns, r.start_ns, r.finish_ns, r.deadline_ns, r.exec_ns, r.memory_requests, c)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_periodic_load_and_the_plain_generator_run_natively() {
        let ft = Some(Native::Periodic { file: "f.toml".to_string(), task: "t".to_string() });
        assert_eq!(native_command(&argv(&["criticore", "load", "--file", "f.toml", "--task", "t"])), ft);
        assert_eq!(native_command(&argv(&["criticore", "load", "--task", "t", "--file", "f.toml"])), ft);
        // Anything more on the periodic mode is the user's own command line: run as written.
        assert_eq!(native_command(&argv(&["criticore", "load", "--file", "f.toml", "--task", "t", "--jobs", "3"])), None);
        assert_eq!(native_command(&argv(&["python", "-m", "criticore", "load", "--file", "f.toml", "--task", "t"])), None);
        // The generator with the options the worker runs, in both spellings.
        for words in [
            &["--buffer", "256MiB"][..],
            &[],
            &["--cpu", "0", "--buffer", "64MiB", "--fresh-pages"],
            &["-c", "1", "-r", "3", "--delay", "10", "-d", "2s", "--pattern", "random"],
            &["--buffer=1MiB", "--bandwidth=500MB/s", "--duration=1s", "--reads=10", "--pattern=stream"],
            &["-b", "1GB/s"],
            &["--delay=5", "--cpu=8191", "--fresh-pages", "--pattern", "stream"],
        ] {
            let full = [&["criticore", "load"][..], words].concat();
            assert_eq!(native_command(&argv(&full)), Some(Native::Load(argv(words))), "{words:?}");
        }
        // Options it leaves to Python (outputs, counts, sweeps), bad values
        // (Python's one-line error), and what does not go together.
        for words in [
            &["--log", "x.csv"][..],
            &["--json"],
            &["--count", "sw:page-faults"],
            &["--interval", "2ms"],
            &["--sweep"],
            &["--buffer", "lots"],
            &["--reads", "11"],
            &["--cpu"],
            &["--pattern", "zigzag"],
            &["--pattern", "random", "--fresh-pages"],
            &["--fresh-pages=yes"],
            // Values Python's command refuses: no zero duration, no CPU past its bound.
            &["--duration", "0s"],
            &["--cpu", "8192"],
            // Short options joined to their value, a flag after `--`, an extra word.
            &["-r3"],
            &["-b=1GB/s"],
            &["--", "--buffer", "1MiB"],
            &["--buffer", "1MiB", "extra"],
            &["--buffer", "1MiB", "--unknown"],
            &["--buf", "1MiB"],
        ] {
            let full = [&["criticore", "load"][..], words].concat();
            assert_eq!(native_command(&argv(&full)), None, "{words:?}");
        }
        let program = Path::new("/x/criticore-worker");
        assert_eq!(native_argv(&argv(&["criticore", "load", "--buffer", "1MiB"]), program), Some(argv(&["/x/criticore-worker", "load", "--buffer", "1MiB"])));
        assert_eq!(native_argv(&argv(&["criticore", "load", "--file", "f", "--task", "t"]), program), Some(argv(&["/x/criticore-worker", "f", "t"])));
    }

    #[test]
    fn the_native_options_give_the_spec_the_python_front_gives() {
        // What `criticore load --cpu 0 --buffer 64MiB --fresh-pages -r 3` hands
        // the spec in Python (crates/criticore-py/src/load.rs builds the same
        // LoadOptions from its keyword arguments).
        let o = LoadOptions::from_args(&argv(&["--cpu", "0", "--buffer", "64MiB", "--fresh-pages", "-r", "3", "-b", "500MB/s", "-d", "2s"])).unwrap();
        let python = LoadOptions { reads: 3, bandwidth_bytes_per_s: Some(500e6), duration_ns: Some(2_000_000_000), buffer_bytes: Some(64 << 20), fresh_pages: true, cpu: Some(0), ..Default::default() };
        assert_eq!(o, python);
        let spec = o.spec().unwrap();
        assert_eq!((spec.read_nb, spec.write_nb, spec.buffer_bytes, spec.fresh_pages, spec.random), (3, 7, 64 << 20, true, false));
        assert_eq!((spec.pace_bytes_per_s, spec.duration_ns), (Some(500e6), Some(2_000_000_000)));
    }
}

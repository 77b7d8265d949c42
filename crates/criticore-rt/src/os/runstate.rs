//! What a run changed on the machine, in a small file that outlives it:
//! `/dev/shm/criticore-run-<pid>-<k>.json`. A run writes it before it
//! launches anything and rewrites it (write, then rename) whenever it starts
//! a task, makes one SCHED_FIFO, creates a cgroup or a counter page; it
//! removes it on every normal end, and its watchdog removes it once it has
//! undone everything. A file whose run and watchdog are both dead (both
//! SIGKILLed, a power-cut of the session) is what [`clean_dead_runs`] undoes:
//! the next `criticore regulate` and `criticore regulate --clean` call it.
//!
//! Every process is named with its start time (`/proc/<pid>/stat` field 22),
//! so a pid handed to another process since is never touched, and the owner
//! and the watchdog count as alive only with the start time recorded.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use crate::os::procs;
use crate::os::throttle::freezer;

/// Where run-state files live, and their name's prefix.
pub const DIR: &str = "/dev/shm";
pub const PREFIX: &str = "criticore-run-";

/// Every command a run launches carries its run in its environment
/// (`CRITICORE_RUN=<owner pid>:<owner start>`), and so do the processes it
/// starts: what a run launched before its state file listed it (both the run
/// and its watchdog killed in that instant) is still found.
pub const RUN_ENV: &str = "CRITICORE_RUN";

/// The value of [`RUN_ENV`] for a run owned by `owner`.
pub fn run_tag(owner: &Proc) -> String {
    format!("{}:{}", owner.pid, owner.start)
}

/// A process by identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proc {
    pub pid: i32,
    pub start: u64,
}

impl Proc {
    /// `pid` as it is now (None if there is no such process).
    pub fn of(pid: i32) -> Option<Proc> {
        procs::start_time(pid).map(|start| Proc { pid, start })
    }

    pub fn alive(&self) -> bool {
        procs::is_alive(self.pid, self.start)
    }
}

/// What one run changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub owner: Option<Proc>,
    pub watchdog: Option<Proc>,
    /// Tasks it launched, each the leader of its own process group.
    pub launched: Vec<Proc>,
    /// Processes it made SCHED_FIFO.
    pub fifo: Vec<Proc>,
    /// `criticore-*` cgroup directories it created.
    pub cgroups: Vec<PathBuf>,
    /// Counter pages it created.
    pub pages: Vec<PathBuf>,
    /// resctrl classes of service it created (`os/resctrl.rs`).
    #[serde(default)]
    pub resctrl: Vec<PathBuf>,
}

static INSTANCES: AtomicUsize = AtomicUsize::new(0);

/// The state file of a run, kept up to date.
pub struct RunState {
    pub path: PathBuf,
    pub state: State,
}

impl RunState {
    /// A new file for this process (empty lists), written at once.
    pub fn create() -> io::Result<RunState> {
        Self::create_in(Path::new(DIR))
    }

    pub fn create_in(dir: &Path) -> io::Result<RunState> {
        let pid = std::process::id() as i32;
        let k = INSTANCES.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{PREFIX}{pid}-{k}.json"));
        let r = RunState { path, state: State { owner: Proc::of(pid), ..State::default() } };
        r.write()?;
        Ok(r)
    }

    /// Rewrite the file: a temporary one renamed over it, so a reader never
    /// sees half of it.
    pub fn write(&self) -> io::Result<()> {
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec(&self.state).map_err(io::Error::other)?)?;
        std::fs::rename(&tmp, &self.path)
    }

    /// Add what `f` adds and rewrite (errors are the caller's to report).
    pub fn update(&mut self, f: impl FnOnce(&mut State)) -> io::Result<()> {
        f(&mut self.state);
        self.write()
    }

    /// A normal end: everything is undone, the file goes.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `criticore-run-<pid>-<k>.json` -> pid.
pub fn owner_of_name(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(PREFIX)?;
    rest.split(['-', '.']).next()?.parse().ok().filter(|&p: &i32| p > 0)
}

/// Undo what the state files of dead runs in `dir` list, and remove the
/// files; one line per thing undone. A run counts as dead when its owner is
/// not alive with the recorded start time and its watchdog (which undoes
/// the run itself) is not either.
pub fn clean_dead_runs_in(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return lines };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(PREFIX) && (n.ends_with(".json") || n.ends_with(".json.tmp"))))
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let Some(owner_pid) = owner_of_name(&name) else { continue };
        let state: Option<State> = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok());
        let Some(state) = state else {
            // Unreadable: a half-written temporary file or damage. Gone with its owner only.
            if procs::stat(owner_pid).is_none() {
                if let Ok(true) = procs::remove_file(&path) {
                    lines.push(format!("removed {} (unreadable; owner pid {owner_pid} is gone)", path.display()));
                }
            }
            continue;
        };
        if state.owner.is_some_and(|o| o.alive()) || state.watchdog.is_some_and(|w| w.alive()) {
            continue;
        }
        if name.ends_with(".tmp") {
            let _ = procs::remove_file(&path);
            continue;
        }
        lines.extend(undo(&state, owner_pid));
        if let Ok(true) = procs::remove_file(&path) {
            lines.push(format!("removed {}", path.display()));
        }
    }
    lines
}

/// Undo one dead run: real-time back to SCHED_OTHER, cgroups thawed and
/// removed (their processes moved out), launched tasks' groups ended,
/// counter pages removed. One line per thing done.
pub fn undo(state: &State, owner_pid: i32) -> Vec<String> {
    let mut lines = Vec::new();
    let who = format!("dead run of pid {owner_pid}");
    for p in &state.fifo {
        if p.alive() {
            let n = procs::demote_realtime(p.pid);
            if n > 0 {
                lines.push(format!("{who}: pid {} back to SCHED_OTHER ({n} thread(s))", p.pid));
            }
        }
    }
    for p in &state.launched {
        if p.alive() {
            // SAFETY: a process alive with its recorded start time.
            unsafe { libc::kill(p.pid, libc::SIGCONT) };
        }
    }
    for d in &state.cgroups {
        if d.is_dir() && freezer::criticore_ancestor(d).is_some() {
            let r = freezer::release_criticore_dir(d);
            let mut line = format!("{who}: thawed and removed cgroup {} ({} process(es) moved out)", d.display(), r.moved);
            if !r.errors.is_empty() {
                line = format!("{who}: cgroup {} not fully removed: {}", d.display(), r.errors.join("; "));
            }
            lines.push(line);
        }
    }
    let groups: Vec<(i32, u64)> = state.launched.iter().map(|p| (p.pid, p.start)).collect();
    for &(g, s) in &groups {
        if procs::group_is_ours(g, s) {
            let members = procs::group_members(g);
            if !members.is_empty() {
                lines.push(format!("{who}: ending launched task group {g} ({} process(es))", members.len()));
            }
        }
    }
    // Not our children: their parent (init or a subreaper) reaps them.
    let ended = procs::end_groups(&groups, procs::END_GRACE, &mut || true);
    if ended.killed > 0 {
        lines.push(format!("{who}: {} group(s) killed after {} s", ended.killed, procs::END_GRACE.as_secs()));
    }
    for d in &state.resctrl {
        if crate::os::resctrl::remove(d) {
            lines.push(format!("{who}: removed resctrl class {} (its threads back in the default class)", d.display()));
        }
    }
    // What the list missed (launched in the instant before it was recorded,
    // or started by a task and left in another process group): found by the run's tag.
    if let Some(owner) = state.owner {
        let (ended, _) = procs::end_tagged(RUN_ENV, &run_tag(&owner));
        if ended > 0 {
            lines.push(format!("{who}: ended {ended} process(es) carrying its {RUN_ENV} tag"));
        }
    }
    for page in &state.pages {
        if let Ok(true) = procs::remove_file(page) {
            lines.push(format!("{who}: removed counter page {}", page.display()));
        }
    }
    lines
}

/// Everything dead runs left: their state files ([`clean_dead_runs_in`]),
/// then `criticore-<pid>` cgroups and counter pages of owners that are gone
/// (runs older than state files, or killed before writing one).
pub fn clean_dead_runs() -> Vec<String> {
    let mut lines = clean_dead_runs_in(Path::new(DIR));
    lines.extend(freezer::clean_stale());
    lines.extend(remove_stale_pages_in(Path::new(DIR)));
    lines
}

/// Counter pages (`criticore-<pid>-<n>`) whose owner pid is gone; one line each.
pub fn remove_stale_pages_in(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return lines };
    for entry in rd.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let owner = name.strip_prefix("criticore-").and_then(|r| r.split('-').next()).and_then(|p| p.parse::<i32>().ok());
        if let Some(pid) = owner {
            // SAFETY: signal 0 only checks existence.
            let gone = unsafe { libc::kill(pid, 0) } != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            if gone {
                if let Ok(true) = procs::remove_file(&entry.path()) {
                    lines.push(format!("removed counter page {} (owner pid {pid} is gone)", entry.path().display()));
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_their_owner() {
        assert_eq!(owner_of_name("criticore-run-4242-0.json"), Some(4242));
        assert_eq!(owner_of_name("criticore-run-4242-3.json.tmp"), Some(4242));
        assert_eq!(owner_of_name("criticore-4242-0"), None);
        assert_eq!(owner_of_name("criticore-run-x.json"), None);
    }

    #[test]
    fn a_live_runs_file_is_left_and_a_dead_runs_file_is_undone() {
        let dir = std::env::temp_dir().join(format!("criticore-runstate-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let page = dir.join("page");
        std::fs::write(&page, b"x").unwrap();
        // A resctrl class of service it made (an empty directory, as resctrl's rmdir takes it).
        let class = dir.join("criticore-1-0");
        std::fs::create_dir(&class).unwrap();
        let mut mine = RunState::create_in(&dir).unwrap();
        mine.update(|s| {
            s.pages.push(page.clone());
            s.resctrl.push(class.clone());
        })
        .unwrap();
        // Alive (this process): nothing done.
        assert_eq!(clean_dead_runs_in(&dir), Vec::<String>::new());
        assert!(page.exists() && mine.path.exists());
        // The same file as written by a process that had our pid but
        // another start time: dead.
        let me = Proc::of(std::process::id() as i32).unwrap();
        mine.update(|s| s.owner = Some(Proc { pid: me.pid, start: me.start + 1 })).unwrap();
        let lines = clean_dead_runs_in(&dir);
        assert_eq!(lines, vec![
            format!("dead run of pid {}: removed resctrl class {} (its threads back in the default class)", me.pid, class.display()),
            format!("dead run of pid {}: removed counter page {}", me.pid, page.display()),
            format!("removed {}", mine.path.display()),
        ]);
        assert!(!page.exists() && !class.exists() && !mine.path.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_dead_runs_unlisted_process_is_found_by_its_tag_and_ended() {
        let dir = std::env::temp_dir().join(format!("criticore-runstate-tag-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A dead owner (our pid, another start time than the other test's)
        // whose state file lists nothing: its launched process was never recorded.
        let me = Proc::of(std::process::id() as i32).unwrap();
        let dead = Proc { pid: me.pid, start: me.start + 2 };
        let mut child = std::process::Command::new("sleep").arg("30").env(RUN_ENV, run_tag(&dead)).spawn().unwrap();
        // Another run's process is left alone.
        let mut other = std::process::Command::new("sleep").arg("30").env(RUN_ENV, run_tag(&me)).spawn().unwrap();
        let mut state = RunState::create_in(&dir).unwrap();
        state.update(|s| s.owner = Some(dead)).unwrap();
        // Its environment is readable once it has exec'd.
        let seen = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            procs::tagged(RUN_ENV, &run_tag(&dead)).contains(&(child.id() as i32))
        });
        let lines = clean_dead_runs_in(&dir);
        let killed = child.wait().unwrap();
        let other_alive = matches!(other.try_wait(), Ok(None));
        let _ = other.kill();
        let _ = other.wait();
        assert!(seen, "the child's environment was never readable");
        assert_eq!(lines, vec![format!("dead run of pid {}: ended 1 process(es) carrying its {RUN_ENV} tag", me.pid), format!("removed {}", state.path.display())]);
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&killed), Some(libc::SIGKILL));
        assert!(other_alive);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

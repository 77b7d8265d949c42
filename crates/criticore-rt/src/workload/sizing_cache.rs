//! This machine's sizing of a periodic task's phases (`periodic::fit_phase`:
//! iterations of 10 lines and the delay after each so a phase takes its work alone),
//! remembered between runs. Calibrating and fitting take about 0.2 s a
//! program, one program after another before the common start; remembered,
//! a run's set-up before time 0 takes milliseconds (docs/runtime.md,
//! "Set-up before time 0").
//!
//! A sizing is reused only on the same machine (CPU model, CPU count, kernel
//! release) and for [`VALID_S`] after it was measured: the host's memory
//! latency drifts (docs/runtime.md), so an old sizing would fix a job's
//! length to a machine that is no longer there. `CRITICORE_RECALIBRATE=1`
//! (`criticore regulate --recalibrate`) measures afresh and remembers that.
//! The store is `$CRITICORE_CACHE_DIR/sizing.json`, else
//! `$XDG_CACHE_HOME/criticore/`, else `~/.cache/criticore/`; it is a cache:
//! one that cannot be read or written is ignored, never an error.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::workload::phase::PhaseWork;

/// How long a sizing is reused (seconds).
pub const VALID_S: u64 = 3_600;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    measured_unix_s: u64,
    iterations: u64,
    read_nb: u32,
    delay_ns: u64,
    work_ns: u64,
    /// ns per iteration of 10 lines alone, with no delay (for the notes).
    ns_per_iteration: f64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    machine: String,
    entries: BTreeMap<String, Entry>,
}

/// What a phase's sizing depends on: the walk and the phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseKey {
    pub buffer_bytes: usize,
    pub line_bytes: usize,
    pub random: bool,
    pub work_ns: u64,
    pub lines: u64,
    pub read_nb: u32,
}

impl PhaseKey {
    fn text(&self) -> String {
        let walk = if self.random { "random" } else { "stream" };
        format!("{} B {walk} line {} B: {} ns, {} lines, {} of 10 read", self.buffer_bytes, self.line_bytes, self.work_ns, self.lines, self.read_nb)
    }
}

pub struct SizingCache {
    path: Option<PathBuf>,
    store: Store,
    now_s: u64,
    fresh: bool,
    changed: bool,
}

fn unix_s() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// CPU model, CPU count and kernel release: a sizing from elsewhere is not reused.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo.lines().find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string())).unwrap_or_default();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{model} × {cpus}, Linux {}", release.trim())
}

fn default_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CRITICORE_CACHE_DIR").or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("criticore"))).or_else(|| var("HOME").map(|h| h.join(".cache/criticore")))
}

impl SizingCache {
    /// The store the environment names (module doc).
    pub fn open() -> SizingCache {
        let fresh = std::env::var("CRITICORE_RECALIBRATE").is_ok_and(|v| v == "1");
        SizingCache::at(default_dir().map(|d| d.join("sizing.json")), fresh, unix_s())
    }

    /// The store at `path` (None: remember nothing), as of `now_s`.
    pub fn at(path: Option<PathBuf>, fresh: bool, now_s: u64) -> SizingCache {
        let machine = machine();
        let store = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice::<Store>(&b).ok())
            .filter(|s| s.machine == machine)
            .unwrap_or(Store { machine, entries: BTreeMap::new() });
        SizingCache { path, store, now_s, fresh, changed: false }
    }

    /// A remembered sizing of `key` still valid, and its ns per iteration alone.
    pub fn get(&self, key: &PhaseKey) -> Option<(PhaseWork, f64)> {
        if self.fresh {
            return None;
        }
        let e = self.store.entries.get(&key.text())?;
        (self.now_s.saturating_sub(e.measured_unix_s) < VALID_S).then(|| (PhaseWork { iterations: e.iterations, read_nb: e.read_nb, delay_ns: e.delay_ns, work_ns: e.work_ns }, e.ns_per_iteration))
    }

    pub fn put(&mut self, key: &PhaseKey, w: &PhaseWork, ns_per_iteration: f64) {
        let e = Entry { measured_unix_s: self.now_s, iterations: w.iterations, read_nb: w.read_nb, delay_ns: w.delay_ns, work_ns: w.work_ns, ns_per_iteration };
        self.store.entries.retain(|_, old| self.now_s.saturating_sub(old.measured_unix_s) < VALID_S);
        self.store.entries.insert(key.text(), e);
        self.changed = true;
    }

    /// Write the store back (atomically: a temporary file renamed over it).
    pub fn save(&self) {
        let Some(path) = self.path.as_ref().filter(|_| self.changed) else { return };
        let Some(dir) = path.parent() else { return };
        let _ = std::fs::create_dir_all(dir);
        let tmp = dir.join(format!(".sizing-{}.json", std::process::id()));
        let Ok(text) = serde_json::to_vec_pretty(&self.store) else { return };
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(work_ns: u64) -> PhaseKey {
        PhaseKey { buffer_bytes: 1 << 20, line_bytes: 64, random: false, work_ns, lines: 2_000, read_nb: 5 }
    }

    fn work() -> PhaseWork {
        PhaseWork { iterations: 200, read_nb: 5, delay_ns: 1_234, work_ns: 1_000_000 }
    }

    #[test]
    fn a_sizing_is_remembered_for_an_hour_on_this_machine_only() {
        let dir = std::env::temp_dir().join(format!("criticore-sizing-test-{}", std::process::id()));
        let path = dir.join("sizing.json");
        let mut c = SizingCache::at(Some(path.clone()), false, 1_000_000);
        assert_eq!(c.get(&key(1_000_000)), None);
        c.put(&key(1_000_000), &work(), 812.5);
        c.save();
        // A later run within the hour reads it; another phase is not there.
        let later = SizingCache::at(Some(path.clone()), false, 1_000_000 + VALID_S - 1);
        assert_eq!(later.get(&key(1_000_000)), Some((work(), 812.5)));
        assert_eq!(later.get(&key(2_000_000)), None);
        // An hour on, or asked to recalibrate, it measures again.
        assert_eq!(SizingCache::at(Some(path.clone()), false, 1_000_000 + VALID_S).get(&key(1_000_000)), None);
        assert_eq!(SizingCache::at(Some(path.clone()), true, 1_000_001).get(&key(1_000_000)), None);
        // A store written on another machine is not reused.
        let text = std::fs::read_to_string(&path).unwrap().replace(&machine(), "another machine");
        std::fs::write(&path, text).unwrap();
        assert_eq!(SizingCache::at(Some(path.clone()), false, 1_000_001).get(&key(1_000_000)), None);
        // A store from before delays were in time (rounds, `delay_nb`) is not read as ns.
        let mut c = SizingCache::at(Some(path.clone()), false, 1_000_000);
        c.put(&key(1_000_000), &work(), 812.5);
        c.save();
        let text = std::fs::read_to_string(&path).unwrap().replace("delay_ns", "delay_nb");
        std::fs::write(&path, text).unwrap();
        assert_eq!(SizingCache::at(Some(path.clone()), false, 1_000_001).get(&key(1_000_000)), None);
        // A store that is not JSON is ignored, not an error.
        std::fs::write(&path, "not json").unwrap();
        assert_eq!(SizingCache::at(Some(path), false, 1_000_001).get(&key(1_000_000)), None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}

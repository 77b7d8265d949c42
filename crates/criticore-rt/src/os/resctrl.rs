//! MCTI's fixed-priority interconnect (mcti-task-isolation §4 rule 5,
//! Property 1) on a machine that offers a real memory-bandwidth control:
//! Intel Memory Bandwidth Allocation or Arm MPAM, both through the kernel's
//! resctrl file system (`/sys/fs/resctrl`, the `MB` resource). User space
//! cannot program an arbiter; what resctrl offers is a cap per class of
//! service (CLOS), as a percentage of the peak, in steps of the hardware's
//! granularity, down to its minimum.
//!
//! The mapping: while the interconnect is fair (rule 2, every period start)
//! every group runs at 100 %. While it is in fixed priority (rule 5), the
//! group Property 1 ranks highest keeps 100 % and every other group is held
//! at the hardware's minimum: a cap cannot reorder requests, but it makes the
//! lower-ranked ones yield the bandwidth, which is what fixed priority gives
//! the top one. Groups of equal top rank all keep 100 %.
//!
//! Where it is present, a run makes one class of service per group
//! ([`Classes`]: a directory `criticore-<pid>-<k>` under the root, the
//! group's threads in its `tasks`), writes each class's `schemata` as
//! [`plan`] says whenever MCTI's mode changes, and removes the classes at
//! the end (their threads go back to the default class); a run killed with
//! its watchdog leaves them listed in its state file, for the next run or
//! `regulate --clean` (`runstate.rs`). This machine has no resctrl (checked
//! by [`present`]): the planning and the writing are tested on a directory
//! laid out as resctrl's; docs/runtime.md ("MCTI at run time").

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Where the kernel mounts resctrl, and the file that says MB is controlled.
pub const ROOT: &str = "/sys/fs/resctrl";

/// The MB resource's limits, from `info/MB/` (`min_bandwidth`, `bandwidth_gran`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbLimits {
    pub min_percent: u32,
    pub granularity: u32,
}

/// Whether this machine's resctrl controls memory bandwidth, and its limits.
pub fn present() -> Option<MbLimits> {
    limits_in(Path::new(ROOT))
}

/// [`present`] under another root (tests).
pub fn limits_in(root: &Path) -> Option<MbLimits> {
    let read = |f: &str| std::fs::read_to_string(root.join("info/MB").join(f)).ok()?.trim().parse::<u32>().ok();
    Some(MbLimits { min_percent: read("min_bandwidth")?, granularity: read("bandwidth_gran")?.max(1) })
}

/// Per group, its MB cap in percent: 100 for all while the interconnect is
/// fair (`priority` None), else 100 for the top Property 1 rank and the
/// minimum (rounded up to the granularity) for the rest.
pub fn plan(priority: Option<&[u32]>, groups: usize, limits: MbLimits) -> Vec<u32> {
    let Some(p) = priority else { return vec![100; groups] };
    let top = p.iter().copied().max().unwrap_or(0);
    let floor = limits.min_percent.div_ceil(limits.granularity) * limits.granularity;
    p.iter().map(|&r| if r == top && top > 0 { 100 } else { floor.min(100) }).collect()
}

/// A `schemata` line capping every memory domain at `percent`.
pub fn schemata(domains: &[u32], percent: u32) -> String {
    let parts: Vec<String> = domains.iter().map(|d| format!("{d}={percent}")).collect();
    format!("MB:{}\n", parts.join(";"))
}

/// The memory domains of a `schemata` file's MB line ("MB:0=100;1=100" -> [0, 1]).
pub fn mb_domains(schemata: &str) -> Vec<u32> {
    let Some(line) = schemata.lines().map(str::trim).find_map(|l| l.strip_prefix("MB:")) else { return Vec::new() };
    line.split(';').filter_map(|d| d.split('=').next()?.trim().parse().ok()).collect()
}

/// The classes of service of one run's groups, created under `root`.
pub struct Classes {
    dirs: Vec<PathBuf>,
    domains: Vec<u32>,
    limits: MbLimits,
    /// The cap each class has now (None: not written yet).
    caps: Vec<Option<u32>>,
}

impl Classes {
    /// One class per group (`groups`: the processes of each), named
    /// `criticore-<tag>-<k>`; every thread of each process moved into it.
    pub fn create(root: &Path, tag: &str, groups: &[Vec<i32>]) -> io::Result<Classes> {
        let limits = limits_in(root).ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{}: no MB resource", root.display())))?;
        let domains = mb_domains(&std::fs::read_to_string(root.join("schemata"))?);
        let mut classes = Classes { dirs: Vec::new(), domains, limits, caps: vec![None; groups.len()] };
        for (k, pids) in groups.iter().enumerate() {
            let dir = root.join(format!("criticore-{tag}-{k}"));
            std::fs::create_dir(&dir)?;
            classes.dirs.push(dir.clone());
            // resctrl takes one thread id per write.
            let mut tasks = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("tasks"))?;
            for &pid in pids {
                for tid in crate::os::procs::threads(pid) {
                    tasks.write_all(format!("{tid}\n").as_bytes())?;
                }
            }
        }
        classes.apply(None)?;
        Ok(classes)
    }

    /// The directories created (for the state file).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Write the caps [`plan`] gives for `priority` (None: fair) where they change.
    pub fn apply(&mut self, priority: Option<&[u32]>) -> io::Result<()> {
        let caps = plan(priority, self.dirs.len(), self.limits);
        for (k, cap) in caps.into_iter().enumerate() {
            if self.caps[k] != Some(cap) {
                std::fs::write(self.dirs[k].join("schemata"), schemata(&self.domains, cap))?;
                self.caps[k] = Some(cap);
            }
        }
        Ok(())
    }
}

impl Drop for Classes {
    fn drop(&mut self) {
        for d in &self.dirs {
            remove(d);
        }
    }
}

/// Remove a class: its threads go back to the default class.
pub fn remove(dir: &Path) -> bool {
    std::fs::remove_dir(dir).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: MbLimits = MbLimits { min_percent: 10, granularity: 10 };

    #[test]
    fn fair_is_uncapped_and_fixed_priority_keeps_only_the_top_rank() {
        assert_eq!(plan(None, 3, LIMITS), vec![100, 100, 100]);
        // Property 1 ranks (mcti::property1_priorities): entity 1 highest,
        // entity 3 not critical (0).
        assert_eq!(plan(Some(&[1, 3, 2, 0]), 4, LIMITS), vec![10, 100, 10, 10]);
        // Equal top ranks both keep 100; a minimum off the granularity rounds up.
        assert_eq!(plan(Some(&[2, 2, 1]), 3, MbLimits { min_percent: 15, granularity: 10 }), vec![100, 100, 20]);
        // No critical entity at all: nobody is preferred.
        assert_eq!(plan(Some(&[0, 0]), 2, LIMITS), vec![10, 10]);
    }

    #[test]
    fn schemata_caps_every_domain() {
        assert_eq!(schemata(&[0, 1], 40), "MB:0=40;1=40\n");
    }

    #[test]
    fn limits_come_from_the_mb_info_files() {
        let root = std::env::temp_dir().join(format!("criticore-resctrl-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(limits_in(&root), None, "no resctrl");
        std::fs::create_dir_all(root.join("info/MB")).unwrap();
        std::fs::write(root.join("info/MB/min_bandwidth"), "10\n").unwrap();
        std::fs::write(root.join("info/MB/bandwidth_gran"), "10\n").unwrap();
        assert_eq!(limits_in(&root), Some(LIMITS));
        std::fs::remove_dir_all(&root).unwrap();
        // This machine: no resctrl mounted with MB (the planning above is all that runs here).
        if !Path::new(ROOT).join("info/MB").exists() {
            assert_eq!(present(), None);
        }
    }

    /// A scratch directory, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let p = std::env::temp_dir().join(format!("criticore-resctrl-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Scratch(p)
        }
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A directory laid out as resctrl's root with an MB resource on two domains.
    fn fake_root() -> Scratch {
        let root = Scratch::new("root");
        std::fs::create_dir_all(root.path().join("info/MB")).unwrap();
        std::fs::write(root.path().join("info/MB/min_bandwidth"), "10\n").unwrap();
        std::fs::write(root.path().join("info/MB/bandwidth_gran"), "10\n").unwrap();
        std::fs::write(root.path().join("schemata"), "    L3:0=fff;1=fff\n    MB:0=100;1=100\n").unwrap();
        root
    }

    #[test]
    fn domains_come_from_the_mb_line() {
        assert_eq!(mb_domains("    L3:0=fff;1=fff\n    MB:0=100;1=100\n"), vec![0, 1]);
        assert_eq!(mb_domains("L3:0=ff\n"), Vec::<u32>::new());
    }

    #[test]
    fn classes_hold_each_groups_threads_and_follow_the_mode() {
        let root = fake_root();
        let me = std::process::id() as i32;
        let mut c = Classes::create(root.path(), "t", &[vec![me], vec![]]).unwrap();
        let dir = |k: usize| root.path().join(format!("criticore-t-{k}"));
        let read = |k: usize, f: &str| std::fs::read_to_string(dir(k).join(f)).unwrap();
        // Every thread of this test process (at least the test's own) in class 0.
        let tids: Vec<i32> = read(0, "tasks").lines().map(|l| l.parse().unwrap()).collect();
        assert!(tids.contains(&(unsafe { libc::gettid() })), "{tids:?}");
        assert_eq!(read(1, "tasks"), "");
        // Fair at the start; fixed priority with group 1 on top caps group 0 at the minimum.
        assert_eq!((read(0, "schemata"), read(1, "schemata")), ("MB:0=100;1=100\n".into(), "MB:0=100;1=100\n".into()));
        c.apply(Some(&[1, 2])).unwrap();
        assert_eq!((read(0, "schemata"), read(1, "schemata")), ("MB:0=10;1=10\n".into(), "MB:0=100;1=100\n".into()));
        c.apply(None).unwrap();
        assert_eq!(read(0, "schemata"), "MB:0=100;1=100\n");
        assert_eq!(c.dirs(), &[dir(0), dir(1)]);
        // No MB resource: refused, nothing made.
        let bare = Scratch::new("bare");
        assert!(Classes::create(bare.path(), "t", &[vec![me]]).is_err());
        assert!(std::fs::read_dir(bare.path()).unwrap().next().is_none());
    }
}

//! Throttling with the cgroup freezer: a group is a cgroup, freezing it stops
//! all its processes (and whatever they fork, which lands in the same cgroup)
//! at once, invisibly to them (no SIGCHLD to their parents, nobody can undo it
//! with a stray SIGCONT; docs/references.md, Runtime §2).
//!
//! Two kernel interfaces, one [`FreezerThrottler`]:
//! - cgroup v1 (`freezer` controller): write `FROZEN`/`THAWED` to
//!   `freezer.state`; reading it shows `FREEZING` until every task is frozen.
//!   Groups live in `<freezer mount>/criticore-<pid>/g<N>`. Frozen tasks show
//!   state `D` in `/proc/<pid>/stat`. Known to get stuck in `FREEZING`
//!   (docs/references.md, Regulation: "freezer v1 unreliability").
//! - cgroup v2: write `1`/`0` to `cgroup.freeze` (any non-root cgroup);
//!   asynchronous, completion is `frozen 1` in `cgroup.events` (docs/references.md,
//!   Runtime §2).
//!   Groups live in `<own cgroup>/criticore-<pid>/g<N>`, under the cgroup the
//!   regulator runs in, so delegation rules (write access to the common
//!   ancestor's `cgroup.procs`) are met whenever they can be. Frozen tasks
//!   show state `S`.
//!
//! [`FreezerThrottler::detect`] prefers v2 when a cgroup2 mount offers
//! `cgroup.freeze` in a cgroup we can create, else the v1 freezer, else it
//! says in one line why neither works.
//!
//! A process is moved into a group by writing its pid to the group's
//! `cgroup.procs`; the cgroup it came from is remembered and it is moved back
//! there when the throttler is released ([`Throttler::resume_all`], `Drop`),
//! after the group is thawed and before the directories are removed.
//!
//! A regulator that dies without releasing leaves frozen cgroups frozen
//! (docs/references.md, Runtime §2): the watchdog thaws them ([`crate::os::watchdog`], which also
//! removes the directories with [`release_criticore_dir`]), and
//! [`clean_stale`] removes what is left by owners that no longer exist.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::signal::open_checked;
use super::{ThrottleError, Throttler, UndoList};

/// Which freezer interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreezerKind {
    /// cgroup v1 `freezer` controller, `freezer.state`.
    V1,
    /// cgroup v2 `cgroup.freeze`.
    V2,
}

impl FreezerKind {
    /// The file that freezes and thaws a cgroup.
    pub fn state_file(self) -> &'static str {
        match self {
            FreezerKind::V1 => "freezer.state",
            FreezerKind::V2 => "cgroup.freeze",
        }
    }
    pub fn freeze_text(self) -> &'static str {
        match self {
            FreezerKind::V1 => "FROZEN",
            FreezerKind::V2 => "1",
        }
    }
    pub fn thaw_text(self) -> &'static str {
        match self {
            FreezerKind::V1 => "THAWED",
            FreezerKind::V2 => "0",
        }
    }
}

/// What the kernel says about a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreezeState {
    Thawed,
    /// Asked to freeze, not every task frozen yet.
    Freezing,
    Frozen,
}

/// The prefix of every directory criticore creates in a cgroup hierarchy;
/// the owner's pid follows it (`criticore-1234`, `criticore-1234-2`).
pub const DIR_PREFIX: &str = "criticore-";

struct Group {
    dir: PathBuf,
    /// (pid, the cgroup directory it came from)
    members: Vec<(i32, PathBuf)>,
    stopped: bool,
}

/// Groups as cgroups under `<base>/criticore-<pid>/g<N>`.
pub struct FreezerThrottler {
    kind: FreezerKind,
    mount: PathBuf,
    /// The hierarchy's root as seen by the mount (mountinfo field 4), "/" normally.
    mount_root: String,
    /// `<base>/criticore-<pid>[-k]`, created with the first group.
    root: PathBuf,
    groups: BTreeMap<usize, Group>,
}

/// Each throttler of this process gets its own directory, so that several can
/// coexist (tests run in parallel threads of one process).
static INSTANCES: AtomicUsize = AtomicUsize::new(0);

fn root_name() -> String {
    let k = INSTANCES.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    if k == 0 {
        format!("{DIR_PREFIX}{pid}")
    } else {
        format!("{DIR_PREFIX}{pid}-{k}")
    }
}

fn err(what: impl Into<String>, reason: impl Into<String>) -> ThrottleError {
    ThrottleError { what: what.into(), reason: reason.into() }
}

impl FreezerThrottler {
    /// cgroup v2 if a cgroup2 mount offers `cgroup.freeze` in a cgroup we can
    /// create, else the cgroup v1 freezer if mounted, else a one-line error
    /// saying why neither.
    pub fn detect() -> Result<FreezerThrottler, ThrottleError> {
        let v2 = match FreezerThrottler::open(FreezerKind::V2) {
            Ok(t) => return Ok(t),
            Err(e) => e.reason,
        };
        let v1 = match FreezerThrottler::open(FreezerKind::V1) {
            Ok(t) => return Ok(t),
            Err(e) => e.reason,
        };
        Err(err("cgroup freezer", format!("none usable: {v2}; {v1}")))
    }

    /// The freezer of one kind on this machine (the mount is looked up in
    /// /proc/self/mountinfo). A probe directory is created and removed to
    /// check that we may create cgroups there and that the state file
    /// (`freezer.state`, `cgroup.freeze`) exists and is writable.
    pub fn open(kind: FreezerKind) -> Result<FreezerThrottler, ThrottleError> {
        let what = match kind {
            FreezerKind::V1 => "cgroup v1 freezer",
            FreezerKind::V2 => "cgroup v2 freezer",
        };
        let Some(m) = find_mount(kind) else {
            let reason = match kind {
                FreezerKind::V1 => "no cgroup v1 hierarchy with the freezer controller is mounted",
                FreezerKind::V2 => "no cgroup2 file system is mounted",
            };
            return Err(err(what, reason));
        };
        match kind {
            FreezerKind::V1 => {
                let name = root_name();
                probe(&m.point.join(format!("{name}-probe")), "freezer.state").map_err(|reason| err(what, format!("{}: {reason}", m.point.display())))?;
                let root = m.point.join(&name);
                Ok(FreezerThrottler { kind, mount: m.point, mount_root: m.root, root, groups: BTreeMap::new() })
            }
            FreezerKind::V2 => {
                // Under our own cgroup first (delegation), then the hierarchy's root.
                let mut bases = Vec::new();
                if let Some(own) = own_cgroup(kind) {
                    bases.push(cgroup_dir(&m.point, &m.root, &own));
                }
                if !bases.contains(&m.point) {
                    bases.push(m.point.clone());
                }
                let name = root_name();
                let mut why = String::new();
                for base in bases {
                    match probe(&base.join(format!("{name}-probe")), "cgroup.freeze") {
                        Ok(()) => {
                            let root = base.join(&name);
                            return Ok(FreezerThrottler { kind, mount: m.point, mount_root: m.root, root, groups: BTreeMap::new() });
                        }
                        Err(reason) => why = format!("cgroup2 at {}: {reason}", base.display()),
                    }
                }
                Err(err(what, why))
            }
        }
    }

    /// A throttler on an explicit hierarchy: `mount` is where the hierarchy
    /// is mounted (to turn `/proc/<pid>/cgroup` paths into directories),
    /// `base` the directory under which `criticore-<pid>` is created. Nothing
    /// is probed; this is how tests run the v2 code against a fake tree.
    pub fn new(kind: FreezerKind, mount: impl Into<PathBuf>, base: impl AsRef<Path>) -> FreezerThrottler {
        let root = base.as_ref().join(root_name());
        FreezerThrottler { kind, mount: mount.into(), mount_root: "/".into(), root, groups: BTreeMap::new() }
    }

    pub fn kind(&self) -> FreezerKind {
        self.kind
    }

    /// `<base>/criticore-<pid>[-k]` (exists once a group does).
    pub fn root_dir(&self) -> &Path {
        &self.root
    }

    /// The cgroup directory of a group, if it exists.
    pub fn group_dir(&self, group: usize) -> Option<&Path> {
        self.groups.get(&group).map(|g| g.dir.as_path())
    }

    /// What the kernel says about a group: v1 `freezer.state`, v2
    /// `cgroup.freeze` (asked) and `frozen` in `cgroup.events` (done).
    pub fn state(&self, group: usize) -> Result<FreezeState, ThrottleError> {
        let g = self.group(group)?;
        read_state(self.kind, &g.dir).map_err(|e| err(format!("group {group} ({})", g.dir.display()), e.to_string()))
    }

    /// Wait until the group is frozen (true) or `timeout` has passed (false).
    /// Polls every 100 us: for tests and for callers that need the stop to be
    /// complete; [`Throttler::stop`] itself does not wait.
    pub fn wait_frozen(&self, group: usize, timeout: Duration) -> Result<bool, ThrottleError> {
        let end = Instant::now() + timeout;
        loop {
            if self.state(group)? == FreezeState::Frozen {
                return Ok(true);
            }
            if Instant::now() >= end {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    fn group(&self, group: usize) -> Result<&Group, ThrottleError> {
        self.groups.get(&group).ok_or_else(|| err(format!("group {group}"), "no such group (add a process to it first)"))
    }

    /// Create `root/g<N>` (an existing directory is reused: it can only be
    /// left over by a dead process that had our pid) and make sure it is thawed.
    fn create_group(&mut self, group: usize) -> Result<(), ThrottleError> {
        if self.groups.contains_key(&group) {
            return Ok(());
        }
        let dir = self.root.join(format!("g{group}"));
        for d in [&self.root, &dir] {
            if let Err(e) = fs::create_dir(d) {
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return Err(err(format!("group {group}"), format!("cannot create cgroup {}: {}", d.display(), e)));
                }
            }
        }
        let state = dir.join(self.kind.state_file());
        if let Err(e) = write_text(&state, self.kind.thaw_text()) {
            let _ = fs::remove_dir(&dir);
            let _ = fs::remove_dir(&self.root);
            return Err(err(format!("group {group}"), format!("cannot write {}: {}", state.display(), e)));
        }
        self.groups.insert(group, Group { dir, members: Vec::new(), stopped: false });
        Ok(())
    }

    /// Where a process is now in this hierarchy. A process found in a
    /// criticore directory (a dead regulator's) is said to come from the
    /// directory that holds it.
    fn origin_of(&self, pid: i32) -> Result<PathBuf, ThrottleError> {
        let text = fs::read_to_string(format!("/proc/{pid}/cgroup")).map_err(|e| err(format!("pid {pid}"), format!("cannot read /proc/{pid}/cgroup: {e}")))?;
        let path = cgroup_path_in(&text, self.kind).ok_or_else(|| {
            err(format!("pid {pid}"), format!("/proc/{pid}/cgroup names no {} cgroup", if self.kind == FreezerKind::V1 { "freezer" } else { "cgroup v2" }))
        })?;
        Ok(outside_criticore(&cgroup_dir(&self.mount, &self.mount_root, &path)))
    }

    /// Where processes go whose origin is unknown (children forked inside a group).
    fn fallback_dir(&self) -> PathBuf {
        self.root.parent().map(Path::to_path_buf).unwrap_or_else(|| self.mount.clone())
    }

    fn write_state(&mut self, group: usize, text: &str) -> Result<(), ThrottleError> {
        let g = self.group(group)?;
        let file = g.dir.join(self.kind.state_file());
        write_text(&file, text).map_err(|e| err(format!("group {group}"), format!("writing {text} to {}: {e}", file.display())))
    }
}

impl Throttler for FreezerThrottler {
    fn name(&self) -> &'static str {
        match self.kind {
            FreezerKind::V1 => "cgroup v1 freezer",
            FreezerKind::V2 => "cgroup v2 cgroup.freeze",
        }
    }

    /// The same refusals as the signal throttler (no such process, not
    /// permitted, ourselves, our parent, init; freezing ourselves would hang
    /// the regulator), then the move into the group's cgroup. Adding to a
    /// frozen group freezes the process at once (the kernel does it).
    fn add(&mut self, group: usize, pid: i32) -> Result<(), ThrottleError> {
        for (&n, g) in &self.groups {
            if g.members.iter().any(|m| m.0 == pid) {
                if n == group {
                    return Ok(());
                }
                return Err(err(format!("pid {pid}"), format!("already in group {n}")));
            }
        }
        drop(open_checked(pid)?);
        let origin = self.origin_of(pid)?;
        self.create_group(group)?;
        let g = self.groups.get_mut(&group).expect("just created");
        move_pid(&g.dir, pid).map_err(|e| {
            let reason = match e.raw_os_error() {
                Some(libc::ESRCH) => "no such process".to_string(),
                Some(libc::EACCES) | Some(libc::EPERM) => format!("not permitted to move it into {}", g.dir.display()),
                _ => format!("moving it into {}: {e}", g.dir.display()),
            };
            err(format!("pid {pid}"), reason)
        })?;
        g.members.push((pid, origin));
        Ok(())
    }

    /// Asynchronous: the group is frozen once [`FreezerThrottler::state`] says so.
    fn stop(&mut self, group: usize) -> Result<(), ThrottleError> {
        self.write_state(group, self.kind.freeze_text())?;
        self.groups.get_mut(&group).expect("checked").stopped = true;
        Ok(())
    }

    fn resume(&mut self, group: usize) -> Result<(), ThrottleError> {
        self.write_state(group, self.kind.thaw_text())?;
        self.groups.get_mut(&group).expect("checked").stopped = false;
        Ok(())
    }

    fn is_stopped(&self, group: usize) -> bool {
        self.groups.get(&group).is_some_and(|g| g.stopped)
    }

    /// Thaw every group, move every process in it back where it came from
    /// (processes forked inside a group go to the directory holding
    /// `criticore-<pid>`), remove the directories, forget the groups.
    fn resume_all(&mut self) {
        let kind = self.kind;
        for g in self.groups.values() {
            let _ = write_text(&g.dir.join(kind.state_file()), kind.thaw_text());
        }
        let fallback = self.fallback_dir();
        for g in std::mem::take(&mut self.groups).into_values() {
            // Sub-cgroups a regulated process may have made inside the group.
            release_tree(&g.dir, &fallback, &|pid| g.members.iter().find(|m| m.0 == pid).map(|m| m.1.clone()), &mut Release::default());
        }
        let _ = remove_dir_retry(&self.root);
    }

    /// One (state file, thaw text) per group; no pids (SIGCONT does not thaw).
    fn undo_list(&self) -> UndoList {
        let thaw = self
            .groups
            .values()
            .map(|g| (g.dir.join(self.kind.state_file()).to_string_lossy().into_owned(), self.kind.thaw_text().to_string()))
            .collect();
        UndoList { pids: Vec::new(), thaw }
    }
}

impl Drop for FreezerThrottler {
    fn drop(&mut self) {
        self.resume_all();
    }
}

// ---------------------------------------------------------------------------
// Releasing directories (throttler, watchdog, stale cleanup)

/// What releasing a directory tree did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Release {
    /// Cgroups written a thaw text.
    pub thawed: usize,
    /// Processes moved out.
    pub moved: usize,
    /// Directories removed.
    pub removed: usize,
    /// One line per failure.
    pub errors: Vec<String>,
}

/// Thaw `root` (a `criticore-*` directory) and every cgroup below it, move
/// their processes to the directory holding `root`, and remove them all.
/// Used by the watchdog after a regulator died and by [`clean_stale`]; the
/// kind is told by which state file a directory has.
pub fn release_criticore_dir(root: &Path) -> Release {
    let mut r = Release::default();
    let target = root.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
    release_tree(root, &target, &|_| None, &mut r);
    r
}

/// Thaw top-down (nothing stays frozen while moving), then move processes
/// and remove directories bottom-up.
fn release_tree(dir: &Path, fallback: &Path, origin: &dyn Fn(i32) -> Option<PathBuf>, r: &mut Release) {
    thaw_tree(dir, r, 0);
    evacuate_tree(dir, fallback, origin, r, 0);
}

const MAX_DEPTH: usize = 16;

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

fn thaw_tree(dir: &Path, r: &mut Release, depth: usize) {
    for kind in [FreezerKind::V1, FreezerKind::V2] {
        let f = dir.join(kind.state_file());
        if f.exists() {
            match write_text(&f, kind.thaw_text()) {
                Ok(()) => r.thawed += 1,
                Err(e) => r.errors.push(format!("thawing {}: {e}", f.display())),
            }
        }
    }
    if depth < MAX_DEPTH {
        for d in subdirs(dir) {
            thaw_tree(&d, r, depth + 1);
        }
    }
}

fn evacuate_tree(dir: &Path, fallback: &Path, origin: &dyn Fn(i32) -> Option<PathBuf>, r: &mut Release, depth: usize) {
    if depth < MAX_DEPTH {
        for d in subdirs(dir) {
            evacuate_tree(&d, fallback, origin, r, depth + 1);
        }
    }
    for pid in read_procs(dir) {
        let to = origin(pid).unwrap_or_else(|| fallback.to_path_buf());
        let mut res = move_pid(&to, pid);
        if res.is_err() && to != fallback {
            // The origin may be gone meanwhile.
            res = move_pid(fallback, pid);
        }
        match res {
            Ok(()) => r.moved += 1,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => r.errors.push(format!("moving pid {pid} out of {}: {e}", dir.display())),
        }
    }
    match remove_dir_retry(dir) {
        Ok(()) => r.removed += 1,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => r.errors.push(format!("removing {}: {e}", dir.display())),
    }
}

/// rmdir, retried for up to 50 ms while the kernel still counts exiting tasks
/// in the cgroup (EBUSY).
fn remove_dir_retry(dir: &Path) -> io::Result<()> {
    let end = Instant::now() + Duration::from_millis(50);
    loop {
        match fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < end => std::thread::sleep(Duration::from_millis(1)),
            r => return r,
        }
    }
}

/// Remove the `criticore-<pid>` directories under every mounted freezer
/// hierarchy whose owner no longer exists: thaw, move processes to the
/// directory holding it, rmdir. One line per directory handled or failure.
pub fn clean_stale() -> Vec<String> {
    let mut lines = Vec::new();
    for kind in [FreezerKind::V1, FreezerKind::V2] {
        if let Some(m) = find_mount(kind) {
            lines.extend(clean_stale_in(&m.point));
        }
    }
    lines
}

/// [`clean_stale`] below one directory (searched down to 16 levels; the
/// inside of `criticore-*` directories is not searched).
pub fn clean_stale_in(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    stale_walk(dir, &mut lines, 0);
    lines
}

fn stale_walk(dir: &Path, lines: &mut Vec<String>, depth: usize) {
    for d in subdirs(dir) {
        let name = d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if let Some(owner) = owner_pid(&name) {
            if process_exists(owner) {
                continue;
            }
            let r = release_criticore_dir(&d);
            let mut line = format!(
                "removed stale {} (owner pid {owner} is gone): thawed {}, moved {} process(es) out",
                d.display(),
                r.thawed,
                r.moved
            );
            if !r.errors.is_empty() {
                line = format!("stale {} (owner pid {owner} is gone) not fully removed: {}", d.display(), r.errors.join("; "));
            }
            lines.push(line);
        } else if depth < MAX_DEPTH {
            stale_walk(&d, lines, depth + 1);
        }
    }
}

/// `criticore-1234` / `criticore-1234-2` -> 1234.
pub fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(DIR_PREFIX)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|&p: &i32| p > 0)
}

fn process_exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The nearest ancestor-or-self of `path` named `criticore-*`, if any.
pub fn criticore_ancestor(path: &Path) -> Option<PathBuf> {
    let mut p = path;
    loop {
        if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(DIR_PREFIX)) {
            return Some(p.to_path_buf());
        }
        p = p.parent()?;
    }
}

fn outside_criticore(dir: &Path) -> PathBuf {
    match criticore_ancestor(dir).and_then(|c| c.parent().map(Path::to_path_buf)) {
        Some(p) => p,
        None => dir.to_path_buf(),
    }
}

// ---------------------------------------------------------------------------
// Files

/// Write `text` in one write() to an existing file (cgroup files cannot be
/// created; a missing one is an error, not a new regular file).
fn write_text(path: &Path, text: &str) -> io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).truncate(true).open(path)?;
    f.write_all(text.as_bytes())
}

fn move_pid(dir: &Path, pid: i32) -> io::Result<()> {
    write_text(&dir.join("cgroup.procs"), &pid.to_string())
}

fn read_procs(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs")).map(|t| t.split_whitespace().filter_map(|w| w.parse().ok()).collect()).unwrap_or_default()
}

fn read_state(kind: FreezerKind, dir: &Path) -> io::Result<FreezeState> {
    match kind {
        FreezerKind::V1 => {
            let s = fs::read_to_string(dir.join("freezer.state"))?;
            Ok(match s.trim() {
                "FROZEN" => FreezeState::Frozen,
                "FREEZING" => FreezeState::Freezing,
                _ => FreezeState::Thawed,
            })
        }
        FreezerKind::V2 => {
            let events = fs::read_to_string(dir.join("cgroup.events"))?;
            if events.lines().any(|l| l.trim() == "frozen 1") {
                return Ok(FreezeState::Frozen);
            }
            let asked = fs::read_to_string(dir.join("cgroup.freeze"))?;
            Ok(if asked.trim() == "1" { FreezeState::Freezing } else { FreezeState::Thawed })
        }
    }
}

/// Create a cgroup, check it offers a writable `file` (`cgroup.freeze` or
/// `freezer.state`), remove it.
fn probe(dir: &Path, file: &str) -> Result<(), String> {
    match fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create a cgroup ({e})")),
    }
    let f = dir.join(file);
    let r = if !f.exists() {
        Err(if file == "cgroup.freeze" { "no cgroup.freeze (kernel older than 5.2?)".to_string() } else { format!("no {file}") })
    } else {
        fs::OpenOptions::new().write(true).open(&f).map(drop).map_err(|e| format!("{file} not writable ({e})"))
    };
    let _ = fs::remove_dir(dir);
    r
}

// ---------------------------------------------------------------------------
// Mounts and /proc/<pid>/cgroup

struct Mount {
    point: PathBuf,
    root: String,
}

/// The first cgroup2 mount (V2) or the first cgroup v1 mount with the
/// freezer controller (V1) in /proc/self/mountinfo.
fn find_mount(kind: FreezerKind) -> Option<Mount> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 5 || r.len() < 3 {
            continue;
        }
        let ok = match kind {
            FreezerKind::V2 => r[0] == "cgroup2",
            FreezerKind::V1 => r[0] == "cgroup" && r[2].split(',').any(|o| o == "freezer"),
        };
        if ok {
            return Some(Mount { point: PathBuf::from(unescape(l[4])), root: unescape(l[3]) });
        }
    }
    None
}

/// mountinfo escapes space, tab, newline and backslash as \ooo.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The path of the cgroup in `/proc/<pid>/cgroup` text: the `0::` line for
/// v2, the line whose controllers include `freezer` for v1.
fn cgroup_path_in(text: &str, kind: FreezerKind) -> Option<String> {
    text.lines().find_map(|line| {
        let mut it = line.splitn(3, ':');
        let (id, ctrl, path) = (it.next()?, it.next()?, it.next()?);
        let hit = match kind {
            FreezerKind::V2 => id == "0" && ctrl.is_empty(),
            FreezerKind::V1 => ctrl.split(',').any(|c| c == "freezer"),
        };
        hit.then(|| path.to_string())
    })
}

fn own_cgroup(kind: FreezerKind) -> Option<String> {
    cgroup_path_in(&fs::read_to_string("/proc/self/cgroup").ok()?, kind)
}

/// The directory of cgroup `path` (as /proc/<pid>/cgroup names it) in a
/// hierarchy mounted at `mount` whose mount root is `root`.
fn cgroup_dir(mount: &Path, root: &str, path: &str) -> PathBuf {
    let rel = if root != "/" { path.strip_prefix(root).unwrap_or(path) } else { path };
    let mut dir = mount.to_path_buf();
    for c in Path::new(rel).components() {
        if let Component::Normal(n) = c {
            dir.push(n);
        }
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_parses_instance_suffix() {
        assert_eq!(owner_pid("criticore-1234"), Some(1234));
        assert_eq!(owner_pid("criticore-1234-2"), Some(1234));
        assert_eq!(owner_pid("criticore-1234-probe"), Some(1234));
        assert_eq!(owner_pid("criticore-x"), None);
        assert_eq!(owner_pid("other-12"), None);
    }

    #[test]
    fn proc_cgroup_lines() {
        let text = "6:freezer:/a/b\n4:memory,foo:/m\n0::/user.slice/x\n";
        assert_eq!(cgroup_path_in(text, FreezerKind::V1).as_deref(), Some("/a/b"));
        assert_eq!(cgroup_path_in(text, FreezerKind::V2).as_deref(), Some("/user.slice/x"));
        assert_eq!(cgroup_dir(Path::new("/sys/fs/cgroup"), "/", "/"), PathBuf::from("/sys/fs/cgroup"));
        assert_eq!(cgroup_dir(Path::new("/sys/fs/cgroup"), "/ns", "/ns/a"), PathBuf::from("/sys/fs/cgroup/a"));
        assert_eq!(unescape(r"/a\040b"), "/a b");
    }

    #[test]
    fn origin_inside_criticore_dir_is_its_holder() {
        assert_eq!(outside_criticore(Path::new("/m/x/criticore-5/g0")), PathBuf::from("/m/x"));
        assert_eq!(outside_criticore(Path::new("/m/x")), PathBuf::from("/m/x"));
    }
}

//! FreezerThrottler: cgroup v1 on this machine (state read back from
//! freezer.state and /proc/<pid>/stat), cgroup v2 where usable, the v2 code
//! path against a fake directory tree, and stale cleanup. Busy-loop children
//! show 'R' when running, 'D' when v1-frozen, 'S' when v2-frozen.
//! Without a usable freezer of a kind, its tests are counted as ignored,
//! with the reason (throttle_common `run`).

mod throttle_common;

use std::fs;
use std::path::{Path, PathBuf};

use criticore_rt::os::throttle::freezer::{clean_stale_in, FreezeState, FreezerKind, FreezerThrottler};
use criticore_rt::os::throttle::Throttler;
use throttle_common::*;

fn main() {
    run(vec![
        test("detect_names_what_it_chose", detect_names_what_it_chose),
        test("v1_freeze_thaw_and_release", v1_freeze_thaw_and_release).needs(freezer_v1),
        test("v1_drop_thaws_and_removes", v1_drop_thaws_and_removes).needs(freezer_v1),
        test("freezer_refusals", freezer_refusals).needs(freezer_v1),
        test("v1_stale_cleanup", v1_stale_cleanup).needs(freezer_v1),
        test("v2_freeze_thaw_and_release_if_usable", v2_freeze_thaw_and_release_if_usable).needs(freezer_v2),
        test("v2_code_path_against_a_fake_tree", v2_code_path_against_a_fake_tree),
        test("v2_fake_tree_missing_files_are_errors_not_created", v2_fake_tree_missing_files_are_errors_not_created),
    ])
}

/// The freezer of `kind`; the trial checked that it is usable here.
fn open(kind: FreezerKind) -> FreezerThrottler {
    FreezerThrottler::open(kind).expect("usable (checked before the test)")
}

fn detect_names_what_it_chose() {
    match FreezerThrottler::detect() {
        Ok(t) => {
            eprintln!("detect(): {} under {}", t.name(), t.root_dir().display());
            assert!(t.name().starts_with("cgroup v"));
        }
        Err(e) => {
            let line = e.to_string();
            eprintln!("detect(): {line}");
            assert!(line.starts_with("cgroup freezer: none usable") && !line.contains('\n'));
        }
    }
}

fn v1_freeze_thaw_and_release() {
    let mut t = open(FreezerKind::V1);
    let busy = Kid::busy();
    let sleeper = Kid::sleeper();
    let _guard = CgroupGuard(t.root_dir().to_path_buf());
    let origin = cgroup_of(busy.pid, false).unwrap();

    t.add(0, busy.pid).unwrap();
    t.add(1, sleeper.pid).unwrap();
    let dir = t.group_dir(0).unwrap().to_path_buf();
    assert!(dir.starts_with(t.root_dir()) && dir.ends_with("g0"));
    assert!(fs::read_to_string(dir.join("cgroup.procs")).unwrap().split_whitespace().any(|p| p == busy.pid.to_string()));
    let state = dir.join("freezer.state");

    t.stop(0).unwrap();
    assert!(t.is_stopped(0));
    assert!(wait_until(WAIT, || read_trim(&state) == "FROZEN").is_some(), "freezer.state: {}", read_trim(&state));
    assert_eq!(t.state(0).unwrap(), FreezeState::Frozen);
    assert_eq!(proc_state(busy.pid), Some('D'));
    assert_eq!(read_trim(&t.group_dir(1).unwrap().join("freezer.state")), "THAWED");
    assert_eq!(
        t.undo_list().thaw,
        vec![
            (state.to_string_lossy().into_owned(), "THAWED".to_string()),
            (t.group_dir(1).unwrap().join("freezer.state").to_string_lossy().into_owned(), "THAWED".to_string())
        ]
    );

    t.resume(0).unwrap();
    assert!(wait_until(WAIT, || read_trim(&state) == "THAWED").is_some());
    assert!(wait_state(busy.pid, WAIT, |s| s == 'R').is_some(), "busy child not running: {:?}", proc_state(busy.pid));

    t.stop(0).unwrap();
    assert!(t.wait_frozen(0, WAIT).unwrap());
    let root = t.root_dir().to_path_buf();
    t.resume_all();
    assert!(!dir.exists() && !root.exists(), "directories left behind");
    assert!(wait_state(busy.pid, WAIT, |s| s == 'R').is_some());
    assert_eq!(cgroup_of(busy.pid, false).unwrap(), origin, "moved back where it came from");
}

fn v1_drop_thaws_and_removes() {
    let mut t = open(FreezerKind::V1);
    let busy = Kid::busy();
    let _guard = CgroupGuard(t.root_dir().to_path_buf());
    t.add(0, busy.pid).unwrap();
    t.stop(0).unwrap();
    assert!(t.wait_frozen(0, WAIT).unwrap());
    let root = t.root_dir().to_path_buf();
    drop(t);
    assert!(!root.exists());
    assert!(wait_state(busy.pid, WAIT, |s| s == 'R').is_some());
}

fn freezer_refusals() {
    let mut t = open(FreezerKind::V1);
    let _guard = CgroupGuard(t.root_dir().to_path_buf());
    let p = free_pid();
    assert_eq!(t.add(0, p).unwrap_err().to_string(), format!("pid {p}: no such process"));
    assert!(t.add(0, std::process::id() as i32).unwrap_err().reason.contains("regulator itself"));
    // SAFETY: cannot fail.
    assert!(t.add(0, unsafe { libc::getppid() }).unwrap_err().reason.contains("parent"));
    assert!(!t.root_dir().exists(), "nothing created for refused pids");
}

/// A `criticore-<dead pid>` tree with a frozen process in it, made by hand
/// under a test-private directory, is thawed and removed by clean_stale_in.
fn v1_stale_cleanup() {
    let t = open(FreezerKind::V1);
    let mount = t.root_dir().parent().unwrap().to_path_buf();
    drop(t);
    let base = mount.join(format!("cc-test-stale-{}", std::process::id()));
    let _guard = CgroupGuard(base.clone());
    let stale = base.join(format!("criticore-{}", free_pid()));
    let g0 = stale.join("g0");
    fs::create_dir_all(&g0).unwrap();
    let busy = Kid::busy();
    fs::write(g0.join("cgroup.procs"), busy.pid.to_string()).unwrap();
    fs::write(g0.join("freezer.state"), "FROZEN").unwrap();
    assert!(wait_until(WAIT, || read_trim(&g0.join("freezer.state")) == "FROZEN").is_some());

    // A live owner's directory is left alone.
    let live = base.join(format!("criticore-{}", std::process::id()));
    fs::create_dir(&live).unwrap();

    let lines = clean_stale_in(&base);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with(&format!("removed stale {}", stale.display())), "{lines:?}");
    assert!(!stale.exists());
    assert!(live.exists());
    assert!(wait_state(busy.pid, WAIT, |s| s == 'R').is_some());
    assert_eq!(cgroup_of(busy.pid, false).unwrap(), format!("/{}", base.file_name().unwrap().to_string_lossy()));
    fs::remove_dir(&live).unwrap();
}

fn v2_freeze_thaw_and_release_if_usable() {
    let mut t = open(FreezerKind::V2);
    let busy = Kid::busy();
    let _guard = CgroupGuard(t.root_dir().to_path_buf());
    let origin = cgroup_of(busy.pid, true).unwrap();
    t.add(0, busy.pid).unwrap();
    let dir = t.group_dir(0).unwrap().to_path_buf();
    t.stop(0).unwrap();
    assert_eq!(read_trim(&dir.join("cgroup.freeze")), "1");
    assert!(wait_until(WAIT, || read_trim(&dir.join("cgroup.events")).lines().any(|l| l == "frozen 1")).is_some());
    assert_eq!(t.state(0).unwrap(), FreezeState::Frozen);
    assert_eq!(proc_state(busy.pid), Some('S'));
    t.resume(0).unwrap();
    assert!(wait_until(WAIT, || read_trim(&dir.join("cgroup.events")).lines().any(|l| l == "frozen 0")).is_some());
    assert!(wait_state(busy.pid, WAIT, |s| s == 'R').is_some());
    t.stop(0).unwrap();
    let root = t.root_dir().to_path_buf();
    t.resume_all();
    assert!(!root.exists());
    assert!(wait_state(busy.pid, WAIT, |s| s == 'R').is_some());
    assert_eq!(cgroup_of(busy.pid, true).unwrap(), origin);
}

/// A fake cgroup v2 tree: plain files standing in for cgroupfs files.
struct FakeTree(PathBuf);

impl FakeTree {
    fn new(tag: &str) -> FakeTree {
        let p = std::env::temp_dir().join(format!("criticore-fakecg-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        fs::write(p.join("cgroup.procs"), "").unwrap();
        FakeTree(p)
    }
    fn cgroup(&self, dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        for f in ["cgroup.procs", "cgroup.freeze", "cgroup.events"] {
            fs::write(dir.join(f), "").unwrap();
        }
        fs::write(dir.join("cgroup.events"), "populated 0\nfrozen 0\n").unwrap();
    }
}

impl Drop for FakeTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn v2_code_path_against_a_fake_tree() {
    let fake = FakeTree::new("v2");
    let mut t = FreezerThrottler::new(FreezerKind::V2, &fake.0, &fake.0);
    assert_eq!(t.name(), "cgroup v2 cgroup.freeze");
    let root = t.root_dir().to_path_buf();
    assert!(root.starts_with(&fake.0) && root.file_name().unwrap().to_string_lossy().starts_with("criticore-"));
    let g0 = root.join("g0");
    fake.cgroup(&g0);
    fs::write(g0.join("cgroup.freeze"), "1").unwrap(); // left frozen by a dead owner with our pid

    // A process that is only named, never moved: these files are not cgroupfs.
    let k = Kid::sleeper();
    t.add(0, k.pid).unwrap();
    let read = |f: &str| read_trim(&g0.join(f));
    assert_eq!(read("cgroup.procs"), k.pid.to_string());
    assert_eq!(read("cgroup.freeze"), "0", "a reused group is thawed before use");

    t.stop(0).unwrap();
    assert_eq!(read("cgroup.freeze"), "1");
    assert!(t.is_stopped(0));
    assert_eq!(t.state(0).unwrap(), FreezeState::Freezing, "asked, cgroup.events not yet frozen");
    fs::write(g0.join("cgroup.events"), "populated 1\nfrozen 1\n").unwrap();
    assert_eq!(t.state(0).unwrap(), FreezeState::Frozen);
    assert_eq!(t.undo_list().thaw, vec![(g0.join("cgroup.freeze").to_string_lossy().into_owned(), "0".to_string())]);
    assert!(t.undo_list().pids.is_empty());

    t.resume(0).unwrap();
    assert_eq!(read("cgroup.freeze"), "0");
    fs::write(g0.join("cgroup.events"), "populated 1\nfrozen 0\n").unwrap();
    assert_eq!(t.state(0).unwrap(), FreezeState::Thawed);

    t.stop(0).unwrap();
    t.resume_all();
    assert_eq!(read("cgroup.freeze"), "0", "thawed on release");
    // Moved back: to its own cgroup if the fake tree has it, else to the directory holding criticore-<pid>.
    assert_eq!(read_trim(&fake.0.join("cgroup.procs")), k.pid.to_string());
    assert!(!t.is_stopped(0));
}

fn v2_fake_tree_missing_files_are_errors_not_created() {
    let fake = FakeTree::new("missing");
    let mut t = FreezerThrottler::new(FreezerKind::V2, &fake.0, &fake.0);
    let k = Kid::sleeper();
    let e = t.add(0, k.pid).unwrap_err();
    assert!(e.to_string().starts_with("group 0: cannot write "), "{e}");
    assert!(!t.root_dir().join("g0").join("cgroup.freeze").exists());
}

//! The shared-memory counter source: a [`CounterPage`] an instrumented program
//! writes (the load generator, or a program using `include/criticore.h`), read
//! by the regulator. For machines without a PMU, where the program itself is the
//! only one that knows its cache-line traffic.
//!
//! Notification: the regulator writes (its pid, [`overflow_signal()`], a
//! cookie) into the page; when the program's reads + writes reach the armed
//! threshold it sends the signal with `sigqueue`, value `cookie << 1` (job ends,
//! if asked for, `cookie << 1 | 1`). That signal is *process-directed*: the
//! regulator must block `overflow_signal()` in every one of its threads (block
//! it before starting any thread, so all inherit the mask) and take it with
//! `sigtimedwait`; a thread that leaves it unblocked would receive it and die
//! (the default action of a real-time signal is to terminate).

use super::{overflow_signal, Counter, CounterError, Counts, Notification};
use crate::os::counter_page::CounterPage;
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, Ordering};

/// A counter page as a [`Counter`].
pub struct ShmCounter {
    page: CounterPage,
    cookie: u64,
    job_end: bool,
    /// Created by us: the file is removed on drop.
    owned: Option<PathBuf>,
}

fn page_error(path: &Path, e: std::io::Error) -> CounterError {
    CounterError::Os { what: format!("counter page {}", path.display()), reason: e.to_string() }
}

impl ShmCounter {
    /// Create the page at `path` (e.g. `/dev/shm/criticore-<pid>-<n>`) for a
    /// program to attach to via `CRITICORE_COUNTER`; removed again on drop.
    /// `cookie` identifies this page in the signal's value (below 2^63).
    pub fn create(path: &Path, cookie: u64) -> Result<Self, CounterError> {
        check_cookie(cookie)?;
        let page = CounterPage::create(path).map_err(|e| page_error(path, e))?;
        Ok(Self::with(page, cookie, Some(path.to_path_buf())))
    }

    /// Attach to an existing page (`--attach` with an explicit page path);
    /// the file is left in place on drop.
    pub fn open(path: &Path, cookie: u64) -> Result<Self, CounterError> {
        check_cookie(cookie)?;
        let page = CounterPage::open(path).map_err(|e| page_error(path, e))?;
        Ok(Self::with(page, cookie, None))
    }

    fn with(page: CounterPage, cookie: u64, owned: Option<PathBuf>) -> Self {
        let c = ShmCounter { page, cookie, job_end: false, owned };
        c.page.set_notify(std::process::id() as i32, overflow_signal(), cookie, false);
        c
    }

    /// The page, for the regulator's job/phase events ([`crate::os::counter_page::EventReader`]).
    pub fn page(&self) -> &CounterPage {
        &self.page
    }

    pub fn cookie(&self) -> u64 {
        self.cookie
    }

    /// Also signal at every job end (value `cookie << 1 | 1`).
    pub fn notify_job_end(&mut self, on: bool) {
        self.job_end = on;
        self.page.set_notify(std::process::id() as i32, overflow_signal(), self.cookie, on);
    }
}

fn check_cookie(cookie: u64) -> Result<(), CounterError> {
    // The value travels as `sival_ptr = cookie << 1 | bit`.
    if cookie > (usize::MAX >> 1) as u64 {
        return Err(CounterError::Os { what: "counter page cookie".into(), reason: format!("{cookie} does not fit in a signal value shifted by one") });
    }
    Ok(())
}

impl Counter for ShmCounter {
    fn describe(&self) -> String {
        let writer = match self.page.writer_pid() {
            0 => "no program attached yet".to_string(),
            pid => format!("writer pid {pid}"),
        };
        format!("counter page {} ({writer})", self.page.path().display())
    }

    fn read(&mut self) -> Result<Counts, CounterError> {
        let (reads, writes) = self.page.counts();
        Ok(Counts { reads, writes })
    }

    /// `Some(n)`: the program signals once reads + writes reach the total at
    /// arming time + n (at most one signal per arming). If the program got
    /// there already (n = 0, or it raced past while we armed), the signal is
    /// sent at once by this call, through the page's own claim-the-threshold
    /// path, so exactly one signal comes either way and the caller needs no
    /// special case.
    fn arm(&mut self, after: Option<u64>) -> Result<bool, CounterError> {
        let Some(n) = after else {
            self.page.arm(None);
            return Ok(true);
        };
        let (r, w) = self.page.counts();
        let at = (r + w).saturating_add(n).min(crate::os::counter_page::OFF - 1);
        self.page.arm(Some(at));
        // Our store of the threshold and the program's count increments may
        // pass each other (store-load); after a full fence, re-check through
        // the page: count(0, 0) adds nothing and, if the total has reached
        // the threshold, claims it (compare-exchange to off) and signals us.
        // The program claims with the same compare-exchange, so only one of
        // us sends.
        fence(Ordering::SeqCst);
        self.page.count(0, 0);
        Ok(true)
    }

    fn notification(&self) -> Option<Notification> {
        Some(Notification::Cookie { signal: overflow_signal(), cookie: self.cookie })
    }

    fn crossed_ns(&self) -> Option<u64> {
        Some(self.page.crossed_ns()).filter(|&t| t > 0)
    }
}

impl Drop for ShmCounter {
    fn drop(&mut self) {
        // The program may outlive us: stop it signalling a pid that may be reused.
        self.page.arm(None);
        self.page.set_notify(0, 0, 0, false);
        if let Some(path) = &self.owned {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The (cookie, job end) a counter page's signal carries, if `info` is one
/// (sent with `sigqueue`, si_code SI_QUEUE).
pub fn siginfo_cookie(info: &libc::siginfo_t) -> Option<(u64, bool)> {
    // siginfo_t's queued-signal member: int signo, errno, code; then the union
    // (8-byte aligned on 64-bit) holding pid, uid, sigval.
    #[repr(C)]
    struct Rt {
        pid: libc::pid_t,
        uid: libc::uid_t,
        value: libc::sigval,
    }
    #[repr(C)]
    struct Info {
        signo: libc::c_int,
        errno: libc::c_int,
        code: libc::c_int,
        rt: Rt,
    }
    const _: () = assert!(std::mem::size_of::<Info>() <= std::mem::size_of::<libc::siginfo_t>());
    let i = unsafe { &*(info as *const libc::siginfo_t as *const Info) };
    if i.code != libc::SI_QUEUE {
        return None;
    }
    let v = i.rt.value.sival_ptr as usize as u64;
    Some((v >> 1, v & 1 == 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("criticore-test-{}-shm-{name}", std::process::id()))
    }

    #[test]
    fn reads_the_page_and_describes_it() {
        let path = temp_path("a");
        let mut c = ShmCounter::create(&path, 7).unwrap();
        let writer = CounterPage::open(&path).unwrap();
        writer.count(5, 2);
        assert_eq!(c.read().unwrap(), Counts { reads: 5, writes: 2 });
        let d = c.describe();
        assert!(d.contains(&path.display().to_string()) && d.contains("no program attached"), "{d}");
        assert_eq!(c.notification(), Some(Notification::Cookie { signal: overflow_signal(), cookie: 7 }));
        // Attaching a second reader to the same page sees the same counts and keeps the file.
        let mut again = ShmCounter::open(&path, 8).unwrap();
        assert_eq!(again.read().unwrap().total(), 7);
        drop(again);
        assert!(path.exists());
        drop(c);
        assert!(!path.exists(), "a created page is removed on drop");
    }

    #[test]
    fn rejects_a_cookie_that_does_not_fit_and_a_missing_page() {
        let path = temp_path("b");
        assert!(matches!(ShmCounter::create(&path, u64::MAX), Err(CounterError::Os { .. })));
        assert!(!path.exists());
        match ShmCounter::open(&path, 1) {
            Err(CounterError::Os { what, .. }) => assert!(what.contains(&path.display().to_string()), "{what}"),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}

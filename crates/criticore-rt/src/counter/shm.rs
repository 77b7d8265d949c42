//! Shared-memory counters: the counts an instrumented program writes to its
//! counter page (`counter_page`), for machines without a PMU. The program
//! itself signals the regulator when its count reaches the armed threshold,
//! like a PMU counter armed with the budget as overflow period.

use super::{overflow_signal, Counter, CounterError, Counts, Notification};
use crate::counter_page::CounterPage;
use std::path::Path;

pub struct ShmCounter {
    page: CounterPage,
    cookie: u64,
}

fn os(path: &Path, e: std::io::Error) -> CounterError {
    CounterError::Os { what: format!("counter page {}", path.display()), reason: e.to_string() }
}

impl ShmCounter {
    /// Create the page for a program to attach to, and ask it to signal us.
    pub fn create(path: &Path, cookie: u64) -> Result<ShmCounter, CounterError> {
        let page = CounterPage::create(path).map_err(|e| os(path, e))?;
        Ok(Self::with(page, cookie))
    }

    /// Attach to a page that exists (the program may already be counting).
    pub fn open(path: &Path, cookie: u64) -> Result<ShmCounter, CounterError> {
        let page = CounterPage::open(path).map_err(|e| os(path, e))?;
        Ok(Self::with(page, cookie))
    }

    fn with(page: CounterPage, cookie: u64) -> ShmCounter {
        page.set_notify(std::process::id() as i32, overflow_signal(), cookie, false);
        ShmCounter { page, cookie }
    }

    pub fn page(&self) -> &CounterPage {
        &self.page
    }
}

impl Counter for ShmCounter {
    fn describe(&self) -> String {
        let writer = self.page.writer_pid();
        let who = if writer > 0 { format!("pid {writer}") } else { "no program attached yet".into() };
        format!("shared-memory counter page {} ({who})", self.page.path().display())
    }

    fn read(&mut self) -> Result<Counts, CounterError> {
        let (reads, writes) = self.page.counts();
        Ok(Counts { reads, writes })
    }

    /// If the count is already past the threshold no signal will come; the
    /// program's next count after that re-checks nothing, so we signal
    /// ourselves to keep the contract "one notification per crossing".
    fn arm(&mut self, after: Option<u64>) -> Result<bool, CounterError> {
        let at = after.map(|n| {
            let (r, w) = self.page.counts();
            r + w + n
        });
        if self.page.arm(at) {
            let value = libc::sigval { sival_ptr: (self.cookie << 1) as usize as *mut libc::c_void };
            unsafe { libc::sigqueue(std::process::id() as i32, overflow_signal(), value) };
        }
        Ok(true)
    }

    fn notification(&self) -> Option<Notification> {
        Some(Notification::Cookie { signal: overflow_signal(), cookie: self.cookie })
    }
}
